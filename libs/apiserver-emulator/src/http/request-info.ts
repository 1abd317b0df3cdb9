import type { RequestInfo } from '../types.js';

/**
 * Splits a request path the way apiserver's RequestInfoFactory does, so RBAC, faults and the
 * request log all speak of verb/group/resource/subresource/namespace/name.
 */
export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
  const parts = path.split('/').filter(Boolean);
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    info.apiVersion = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    info.apiGroup = parts[1]!;
    info.apiVersion = parts[2]!;
    rest = parts.slice(3);
  } else {
    return info;
  }
  if (rest.length === 0) return info;
  info.isResourceRequest = true;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
  ) {
    info.namespace = rest[1]!;
    rest = rest.slice(2);
  } else if (rest[0] === 'namespaces' && rest.length >= 2) {
    info.namespace = rest[1]!;
  }
  info.resource = rest[0]!;
  info.name = rest[1] ?? '';
  info.subresource = rest.slice(2).join('/');
  info.verb = verbFor(method, info.name !== '', query);
  return info;
}

function verbFor(method: string, named: boolean, query: URLSearchParams): string {
  // RequestInfoFactory: any watch value but false/0 makes the verb watch (the value is parsed later).
  const watch = query.get('watch');
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch !== null && !['false', '0', ''].includes(watch.toLowerCase())) return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
