import type { EmulatorCore } from '../core.js';
import { badRequest, methodNotAllowed, notFound, pathNotFound } from '../errors.js';
import {
  PATCH_TYPES,
  type DeleteOptions,
  type FieldValidation,
  type WriteOptions,
} from '../objects.js';
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  table,
  type IncludeObject,
  type PrinterColumn,
} from '../table.js';
import type { KubeObject, RequestInfo } from '../types.js';
import { decodeBody } from './body.js';
import type { RequestContext } from './context.js';
import { acceptEntries } from '../discovery.js';
import { compileFilter } from './filter.js';
import { listJson, listMeta, listPage } from './list.js';
import { boolParam, validateListOptions } from './query.js';
import { handleScale } from './scale.js';
import { sendJson, sendNegotiated, warningHeaders } from './respond.js';
import { review } from './reviews.js';
import { WatchStream } from './watch-stream.js';
import { managerFromUserAgent } from '../managed-fields.js';
import { rfc3339 } from '../util.js';

function wantsTable(accept: string | undefined): boolean {
  return acceptEntries(accept).some((e) => e.as === 'Table' && e.g === 'meta.k8s.io');
}

function columnsOf(rt: ResourceType): PrinterColumn[] {
  return rt.printerColumns ?? [NAME_COLUMN, AGE_COLUMN];
}

function writeOptions(ctx: RequestContext): WriteOptions {
  const q = ctx.query;
  const validation = q.get('fieldValidation') ?? 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(validation))
    throw badRequest(`fieldValidation must be one of Strict, Warn, Ignore; got ${validation}`);
  const dryRun = q.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All'))
    throw badRequest(`dryRun: Unsupported value: "${dryRun.join(',')}": supported values: "All"`);
  return {
    dryRun: dryRun.length > 0,
    fieldManager: q.get('fieldManager') ?? managerFromUserAgent(ctx.req.headers['user-agent']),
    fieldValidation: validation as FieldValidation,
    subresource: ctx.info.subresource || undefined,
    user: ctx.user,
  };
}

function resolve(core: EmulatorCore, info: RequestInfo): ResourceType {
  const rt = core.registry.get(info.apiGroup, info.apiVersion, info.resource);
  if (!rt) throw pathNotFound();
  const sub = info.subresource;
  if (
    sub &&
    !(sub === 'status' && rt.statusSubresource) &&
    !(rt.extraSubresources ?? []).some((s) => s.name === sub)
  )
    throw pathNotFound();
  return rt;
}

/** Sends one object in the requested version (or as a one-row Table). */
function sendObject(
  ctx: RequestContext,
  rt: ResourceType,
  obj: KubeObject,
  code: number,
  warnings: string[] = [],
): void {
  const served = ctx.core.svc.serve(rt, obj);
  if (ctx.req.method === 'GET' && wantsTable(ctx.req.headers.accept)) {
    const t = table(
      columnsOf(rt),
      [served],
      { resourceVersion: obj.metadata.resourceVersion },
      ctx.core.clock.now(),
      includeObject(ctx.query),
    );
    sendJson(ctx.res, code, t);
    return;
  }
  const json = served === obj ? ctx.core.store.jsonOf(obj) : undefined;
  sendNegotiated(ctx.res, ctx.req.headers.accept, code, json ?? served, warningHeaders(warnings));
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function bodyObject(ctx: RequestContext): KubeObject {
  const body = decodeBody(ctx.body, ctx.req.headers['content-type']);
  if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  return body as KubeObject;
}

export async function handleResource(ctx: RequestContext): Promise<void> {
  const { info, core } = ctx;
  const rt = resolve(core, info);
  if (rt.virtual) return handleVirtual(ctx, rt);
  const ns = info.namespace;
  if (
    rt.namespaced &&
    info.resource !== 'namespaces' &&
    !ns &&
    !['list', 'watch'].includes(info.verb)
  )
    throw pathNotFound();
  const svc = core.svc;
  if (info.subresource === 'scale') return handleScale(ctx, rt, writeOptions(ctx));
  switch (info.verb) {
    case 'get':
      if (info.subresource === 'log') return podLog(ctx, rt);
      return sendObject(ctx, rt, svc.get(rt, ns, info.name).obj, 200);
    case 'list':
      return list(ctx, rt);
    case 'watch':
      return watch(ctx, rt);
    case 'create': {
      if (info.name && info.subresource === 'token' && rt.plural === 'serviceaccounts')
        return tokenRequest(ctx, rt);
      if (info.name) throw methodNotAllowed();
      const r = svc.create(rt, ns, bodyObject(ctx), writeOptions(ctx));
      return sendObject(ctx, rt, r.obj, 201, r.warnings);
    }
    case 'update': {
      const r = svc.update(
        rt,
        rt.namespaced ? ns : '',
        info.name,
        bodyObject(ctx),
        writeOptions(ctx),
      );
      return sendObject(ctx, rt, r.obj, r.created ? 201 : 200, r.warnings);
    }
    case 'patch': {
      const body = decodeBody(ctx.body, ctx.req.headers['content-type']);
      const force = boolParam(ctx.query, 'force');
      const contentType = ctx.req.headers['content-type'] ?? '';
      const opts = writeOptions(ctx);
      // Apply has no User-Agent fallback: the manager must be named (server-side-apply docs).
      if (contentType.startsWith(PATCH_TYPES.apply))
        opts.fieldManager = ctx.query.get('fieldManager') ?? undefined;
      const r = svc.patch(rt, rt.namespaced ? ns : '', info.name, contentType, body, {
        ...opts,
        force,
      });
      return sendObject(ctx, rt, r.obj, r.created ? 201 : 200, r.warnings);
    }
    case 'delete':
      return remove(ctx, rt);
    case 'deletecollection':
      return removeCollection(ctx, rt);
    default:
      throw methodNotAllowed();
  }
}

function list(ctx: RequestContext, rt: ResourceType): void {
  const svc = ctx.core.svc;
  const filter = compileFilter(rt, ctx.query);
  const page = listPage(svc, rt, ctx.info.namespace, filter, ctx.query);
  if (wantsTable(ctx.req.headers.accept)) {
    const objects = page.items.map((s) => svc.serve(rt, s.obj));
    sendJson(
      ctx.res,
      200,
      table(columnsOf(rt), objects, listMeta(page), ctx.core.clock.now(), includeObject(ctx.query)),
    );
    return;
  }
  sendNegotiated(ctx.res, ctx.req.headers.accept, 200, listJson(svc, rt, page));
}

/** Watch per api-concepts #semantics-for-watch: unset/"0" replay current state, a specific RV resumes or gets 410. */
function watch(ctx: RequestContext, rt: ResourceType): void {
  const { core, query, res } = ctx;
  const filter = compileFilter(rt, query);
  const rvParam = query.get('resourceVersion');
  const timeout = query.get('timeoutSeconds');
  // Checked before the stream starts, so a bad value is a plain error (watch=yes included).
  boolParam(query, 'watch');
  validateListOptions(query, true);
  const bookmarks = boolParam(query, 'allowWatchBookmarks');
  const sendInitial = boolParam(query, 'sendInitialEvents');
  const namespace = rt.namespaced ? ctx.info.namespace : '';
  const bucket = core.store.bucket(rt.storageKey);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  const stream = new WatchStream(
    res,
    rt,
    bucket.cache,
    core.svc,
    {
      namespace,
      filter,
      format: wantsTable(ctx.req.headers.accept) ? 'table' : 'json',
      columns: columnsOf(rt),
      bookmarks,
      bookmarkIntervalMs: core.bookmarkIntervalMs,
      maxBufferedBytes: core.watchBufferLimitBytes,
      timeoutMs: timeout ? Number(timeout) * 1000 : undefined,
      user: ctx.user.username,
    },
    (w) => core.watches.open.delete(w),
    core.store.resourceVersion,
  );
  core.watches.open.add(stream);
  const target = { group: rt.group, resource: rt.plural, namespace, user: ctx.user.username };
  const fault = core.watches.takeNext(target);
  // Dropped after it began, so the client sees its watch accepted and then cut.
  if (fault === 'drop') setImmediate(() => stream.drop());
  if (fault === 'expire') {
    stream.fail(
      410,
      'Expired',
      `too old resource version: ${rvParam ?? 0} (${core.store.resourceVersion})`,
    );
    return;
  }
  if (!rvParam || rvParam === '0' || sendInitial) {
    const initial = [...core.store.list(rt.storageKey, namespace || undefined)].map((s) => ({
      type: 'ADDED' as const,
      rv: s.rv,
      obj: s.obj,
      json: s.json,
    }));
    stream.begin(initial, sendInitial && bookmarks);
    return;
  }
  const rv = Number(rvParam);
  if (!Number.isFinite(rv)) {
    stream.fail(400, 'BadRequest', `invalid resource version: ${rvParam}`);
    return;
  }
  const history = rv < core.store.compactedRv ? undefined : bucket.cache.since(rv);
  if (!history) {
    stream.fail(
      410,
      'Expired',
      `too old resource version: ${rv} (${Math.max(core.store.compactedRv, bucket.cache.oldestServable) + 1})`,
    );
    return;
  }
  stream.begin(history, false);
}

function deleteOptions(ctx: RequestContext): DeleteOptions {
  const body = (decodeBody(ctx.body, ctx.req.headers['content-type']) ?? {}) as DeleteOptions & {
    dryRun?: string[];
  };
  const q = ctx.query;
  const policy = q.get('propagationPolicy') ?? body.propagationPolicy;
  if (policy && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  const opts: DeleteOptions = {
    dryRun:
      q.getAll('dryRun').includes('All') ||
      (Array.isArray(body.dryRun) && body.dryRun.includes('All')),
    user: ctx.user,
  };
  if (policy) opts.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  if (body.orphanDependents !== undefined) opts.orphanDependents = body.orphanDependents;
  if (body.preconditions) opts.preconditions = body.preconditions;
  return opts;
}

function remove(ctx: RequestContext, rt: ResourceType): void {
  const opts = deleteOptions(ctx);
  const r = ctx.core.svc.delete(rt, rt.namespaced ? ctx.info.namespace : '', ctx.info.name, opts);
  const code = opts.orphanDependents === false ? 202 : 200;
  const warnings = r.warnings ?? [];
  if (!r.deleted || rt.returnDeletedObject) return sendObject(ctx, rt, r.obj, code, warnings);
  const details: Record<string, unknown> = {
    name: ctx.info.name,
    kind: rt.plural,
    uid: r.obj.metadata.uid,
  };
  if (rt.group) details.group = rt.group;
  sendJson(
    ctx.res,
    code,
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details },
    warningHeaders(warnings),
  );
}

function removeCollection(ctx: RequestContext, rt: ResourceType): void {
  const { svc } = ctx.core;
  const opts = deleteOptions(ctx);
  const filter = compileFilter(rt, ctx.query);
  const deleted: KubeObject[] = [];
  for (const s of [
    ...svc.store.list(rt.storageKey, rt.namespaced ? ctx.info.namespace || undefined : undefined),
  ]) {
    if (filter && !filter(s.obj)) continue;
    deleted.push(
      svc.serve(rt, svc.delete(rt, s.obj.metadata.namespace ?? '', s.obj.metadata.name!, opts).obj),
    );
  }
  sendJson(ctx.res, 200, {
    kind: `${rt.kind}List`,
    apiVersion: apiVersionOf(rt),
    metadata: { resourceVersion: String(svc.store.resourceVersion) },
    items: deleted,
  });
}

function handleVirtual(ctx: RequestContext, rt: ResourceType): void {
  if (ctx.info.verb !== 'create') throw methodNotAllowed();
  const body = bodyObject(ctx) as unknown as Record<string, unknown>;
  sendJson(ctx.res, 201, review(rt, body, ctx.user, ctx.core, ctx.info.namespace));
}

/** pods/log: no container runs here, so the log says what the Pod's phase is. */
function podLog(ctx: RequestContext, rt: ResourceType): void {
  const pod = ctx.core.svc.get(rt, ctx.info.namespace, ctx.info.name).obj;
  const phase = (pod.status as { phase?: string } | undefined)?.phase ?? 'Unknown';
  const text = `[apiserver emulator] pod ${ctx.info.name} is ${phase}; the emulator runs no containers, so there is no log output\n`;
  ctx.res.writeHead(200, {
    'Content-Type': 'text/plain',
    'Content-Length': Buffer.byteLength(text),
  });
  ctx.res.end(text);
}

/** TokenRequest (serviceaccounts/token): a bearer token this emulator accepts for that ServiceAccount. */
function tokenRequest(ctx: RequestContext, rt: ResourceType): void {
  const { core, info } = ctx;
  if (!core.svc.find(rt, info.namespace, info.name))
    throw notFound('serviceaccounts', '', info.name);
  const body = (decodeBody(ctx.body, ctx.req.headers['content-type']) ?? {}) as {
    spec?: { expirationSeconds?: number; audiences?: string[] };
  };
  const seconds = body.spec?.expirationSeconds ?? 3600;
  const token = core.authn.issueServiceAccountToken(info.namespace, info.name);
  sendJson(ctx.res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: info.name, namespace: info.namespace, creationTimestamp: null },
    spec: {
      audiences: body.spec?.audiences ?? ['https://kubernetes.default.svc'],
      expirationSeconds: seconds,
      boundObjectRef: null,
    },
    status: { token, expirationTimestamp: rfc3339(core.clock.now() + seconds * 1000) },
  });
}
