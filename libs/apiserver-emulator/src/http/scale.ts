import { conflict, invalid, methodNotAllowed, unsupportedMediaType } from '../errors.js';
import { PATCH_TYPES, type WriteOptions } from '../objects.js';
import { jsonPatch, mergePatch, strategicMergePatch } from '../patch.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject } from '../types.js';
import { clone, isPlainObject } from '../util.js';
import { decodeBody } from './body.js';
import { sendJson } from './respond.js';
import type { RequestContext } from './context.js';

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key. */
function selectorString(sel: Selector | undefined): string {
  const reqs: [string, string][] = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => [
    k,
    `${k}=${v}`,
  ]);
  for (const e of sel?.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    const text =
      e.operator === 'In'
        ? `${e.key} in (${values})`
        : e.operator === 'NotIn'
          ? `${e.key} notin (${values})`
          : e.operator === 'Exists'
            ? e.key
            : `!${e.key}`;
    reqs.push([e.key, text]);
  }
  return reqs
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map((r) => r[1])
    .join(',');
}

/** The autoscaling/v1 Scale a workload shows through its scale subresource. */
function scaleOf(obj: KubeObject): KubeObject {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: Selector };
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: {
      replicas: (obj.status as { replicas?: number } | undefined)?.replicas ?? 0,
      selector: selectorString(spec.selector),
    },
  };
}

function patched(contentType: string, base: KubeObject, patch: unknown): KubeObject {
  switch (contentType.split(';')[0]!.trim()) {
    case PATCH_TYPES.merge:
      return mergePatch(base, patch) as KubeObject;
    case PATCH_TYPES.json:
      return jsonPatch(base, patch) as KubeObject;
    case PATCH_TYPES.strategic:
      return strategicMergePatch(base, patch) as KubeObject;
    default:
      throw unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.json}, ${PATCH_TYPES.merge}, ${PATCH_TYPES.strategic}`,
      );
  }
}

/**
 * GET/PUT/PATCH `<workload>/scale` (docs/reference/kubernetes-api/autoscaling/, "Scale"): reads
 * and writes spec.replicas through an autoscaling/v1 Scale, as `kubectl scale` and HPAs do.
 */
export function handleScale(ctx: RequestContext, rt: ResourceType, opts: WriteOptions): void {
  const { svc } = ctx.core;
  const { namespace, name, verb } = ctx.info;
  const live = svc.get(rt, namespace, name).obj;
  if (verb === 'get') return sendJson(ctx.res, 200, scaleOf(live));
  if (verb !== 'update' && verb !== 'patch') throw methodNotAllowed();
  const body = decodeBody(ctx.body, ctx.req.headers['content-type']);
  const scale =
    verb === 'update'
      ? (body as KubeObject)
      : patched(ctx.req.headers['content-type'] ?? '', scaleOf(live), body);
  const rv = isPlainObject(scale?.metadata) ? scale.metadata.resourceVersion : undefined;
  if (rv && rv !== live.metadata.resourceVersion) throw conflict(rt.plural, rt.group, name);
  const replicas = (scale?.spec as { replicas?: unknown } | undefined)?.replicas;
  if (!Number.isInteger(replicas) || (replicas as number) < 0)
    throw invalid('Scale', 'autoscaling', name, [
      {
        type: 'Invalid',
        field: 'spec.replicas',
        value: replicas,
        detail: 'must be greater than or equal to 0',
      },
    ]);
  const next = clone(live);
  (next.spec as { replicas: number }).replicas = replicas as number;
  const r = svc.update(rt, namespace, name, next, { ...opts, subresource: 'scale' });
  sendJson(ctx.res, 200, scaleOf(r.obj));
}
