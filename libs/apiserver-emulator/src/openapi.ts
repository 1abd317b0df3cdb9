import type { Registry } from './registry.js';

/**
 * Just enough OpenAPI for `kubectl apply` with validation on (see research: query_param_verifier_v3):
 * a v3 index whose group-version documents list a PATCH per kind with `fieldValidation`, and a
 * minimal protobuf v2 document for kubectl versions that fetch /openapi/v2 first.
 */
export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

function protoString(field: number, value: string): Buffer {
  const bytes = Buffer.from(value);
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
}

/** gnostic Document{swagger: "2.0", info: {title, version}}. */
export function openApiV2(version: string): Buffer {
  const info = Buffer.concat([protoString(1, 'Kubernetes'), protoString(2, version)]);
  return Buffer.concat([protoString(1, '2.0'), Buffer.from([(2 << 3) | 2, info.length]), info]);
}

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openApiV3Root(registry: Registry): string {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of registry.groups()) {
    for (const v of g.versions) {
      const p = gvPath(g.name, v);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash(registry, p)}` };
    }
  }
  return JSON.stringify({ paths });
}

function hash(registry: Registry, path: string): string {
  let h = registry.generation * 2654435761;
  for (const c of path) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h.toString(16).toUpperCase().padStart(16, '0');
}

const PATCH_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
}));

/** `com.example.ops.v1alpha1.BackupJob`: the group reversed, as kube-apiserver names CRD schemas. */
function schemaName(group: string, version: string, kind: string): string {
  const prefix = group ? group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${prefix}.${version}.${kind}`;
}

export function openApiV3GroupVersion(
  registry: Registry,
  group: string,
  version: string,
  serverVersion: string,
): string | undefined {
  const rts = registry.inGroupVersion(group, version).filter((rt) => !rt.virtual);
  if (rts.length === 0 && registry.inGroupVersion(group, version).length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const rt of rts) {
    // kubectl explain finds a kind by this extension; only kinds with a schema (CRDs) have one.
    if (rt.schema)
      schemas[schemaName(group, version, rt.kind)] = {
        ...rt.schema,
        'x-kubernetes-group-version-kind': [{ group, version, kind: rt.kind }],
      };
    const base = `/${gvPath(group, version)}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}/{name}`;
    paths[base] = {
      patch: {
        'x-kubernetes-group-version-kind': { group, version, kind: rt.kind },
        'x-kubernetes-action': 'patch',
        parameters: PATCH_PARAMS,
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return JSON.stringify({
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: serverVersion },
    paths,
    components: { schemas },
  });
}
