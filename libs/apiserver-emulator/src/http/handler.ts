import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorCore } from '../core.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, negotiateAggregated } from '../discovery.js';
import { forbidden, ApiError, pathNotFound } from '../errors.js';
import { faultError } from '../faults.js';
import {
  OPENAPI_V2_CONTENT_TYPE,
  openApiV2,
  openApiV3GroupVersion,
  openApiV3Root,
} from '../openapi.js';
import { forbiddenMessage, type Attributes } from '../rbac.js';
import type { RequestInfo, UserInfo } from '../types.js';
import { readBody } from './body.js';
import { preconditionOf, type Precondition } from './precondition.js';
import { requestInfo } from './request-info.js';
import { handleResource } from './resources.js';
import { sendError, sendJson } from './respond.js';

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function attributes(info: RequestInfo): Attributes {
  if (!info.isResourceRequest)
    return { verb: info.verb === 'head' ? 'get' : info.verb, path: info.path };
  return {
    verb: info.verb,
    group: info.apiGroup,
    resource: info.resource,
    subresource: info.subresource || undefined,
    namespace: info.namespace || undefined,
    name: info.name || undefined,
  };
}

/** Non-resource endpoints: version, health, discovery, OpenAPI. */
function handleNonResource(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  const parts = path.split('/').filter(Boolean);
  const accept = req.headers.accept;
  if (path === '/version' || path === '/version/') {
    const [major, minor] = core.serverVersion.replace(/^v/, '').split('.');
    sendJson(res, 200, {
      major,
      minor,
      gitVersion: core.serverVersion,
      gitCommit: 'emulator',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: 'go1.23',
      compiler: 'gc',
      platform: 'linux/amd64',
    });
    return;
  }
  if (['/healthz', '/readyz', '/livez'].includes(path)) {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
    return;
  }
  if (path === '/api' || path === '/apis') {
    const agg = negotiateAggregated(accept);
    if (agg) {
      sendJson(
        res,
        200,
        core.discovery.aggregated(path === '/api', agg),
        {},
        agg === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1,
      );
      return;
    }
    sendJson(
      res,
      200,
      path === '/api' ? core.discovery.apiVersions() : core.discovery.apiGroupList(),
    );
    return;
  }
  if (parts[0] === 'api' && parts.length === 2)
    return sendOr404(res, core.discovery.resourceList('', parts[1]!));
  if (parts[0] === 'apis' && parts.length === 2)
    return sendOr404(res, core.discovery.apiGroup(parts[1]!));
  if (parts[0] === 'apis' && parts.length === 3)
    return sendOr404(res, core.discovery.resourceList(parts[1]!, parts[2]!));
  if (path === '/openapi/v2' || path === '/swagger-2.0.0.pb-v1') {
    const body = openApiV2(core.serverVersion);
    res.writeHead(200, { 'Content-Type': OPENAPI_V2_CONTENT_TYPE, 'Content-Length': body.length });
    res.end(body);
    return;
  }
  if (path === '/openapi/v3' || path === '/openapi/v3/')
    return sendJson(res, 200, openApiV3Root(core.registry));
  if (parts[0] === 'openapi' && parts[1] === 'v3') {
    const gv = parts.slice(2);
    const doc =
      gv[0] === 'api'
        ? openApiV3GroupVersion(core.registry, '', gv[1] ?? '', core.serverVersion)
        : openApiV3GroupVersion(core.registry, gv[1] ?? '', gv[2] ?? '', core.serverVersion);
    return sendOr404(res, doc);
  }
  throw pathNotFound();
}

function sendOr404(res: ServerResponse, body: string | undefined): void {
  if (body === undefined) throw pathNotFound();
  sendJson(res, 200, body);
}

function identify(core: EmulatorCore, req: IncomingMessage): UserInfo {
  const caller = core.authn.authenticate(req.headers);
  const impersonated = core.authn.impersonated(req.headers);
  if (!impersonated) return caller;
  if (core.rbacEnabled) {
    const d = core.authz.authorize(caller, {
      verb: 'impersonate',
      group: '',
      resource: 'users',
      name: impersonated.username,
    });
    if (!d.allowed)
      throw forbidden(
        'users',
        '',
        impersonated.username,
        `User "${caller.username}" cannot impersonate resource "users" in API group "" at the cluster scope`,
      );
  }
  return impersonated;
}

/**
 * One request through the pipeline: authenticate, classify, inject faults, authorize, serve,
 * and record it in the request log.
 */
export async function handle(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const url = new URL(req.url ?? '/', 'http://emulator');
  const info = requestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
  let user: UserInfo = core.authn.anonymous;
  let code: number;
  let fault: string | undefined;
  let precondition: Precondition | undefined;
  try {
    const body = await readBody(req);
    precondition = preconditionOf(info, body, req.headers['content-type']);
    user = identify(core, req);
    const latency = core.faults.latencyFor(info, user.username);
    if (latency > 0) await delay(latency);
    const injected = core.faults.errorFor(info, user.username);
    if (injected && !(injected.code === 410 && info.verb === 'watch')) {
      fault = `error ${injected.code}`;
      throw faultError(injected);
    }
    if (injected)
      core.watches.expireNextWatches(1, {
        group: info.apiGroup,
        resource: info.resource,
        user: user.username,
      });
    if (core.rbacEnabled) {
      const attrs = attributes(info);
      const d = core.authz.authorize(user, attrs);
      if (!d.allowed) {
        if (!info.isResourceRequest)
          throw new ApiError(403, 'Forbidden', `forbidden: ${forbiddenMessage(user, attrs)}`, {});
        throw forbidden(info.resource, info.apiGroup, info.name, forbiddenMessage(user, attrs));
      }
    }
    if (info.isResourceRequest)
      await handleResource({ req, res, info, query: url.searchParams, user, body, core });
    else handleNonResource(core, req, res, url.pathname);
    code = res.statusCode;
  } catch (err) {
    code = sendError(res, err);
  }
  const ended = performance.now();
  core.log.add(info, {
    seq: core.log.nextSeq(),
    // On the same clock as durationMs, so time - durationMs is when the request arrived.
    time: performance.timeOrigin + ended,
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.search,
    user: user.username,
    userAgent: req.headers['user-agent'] ?? '',
    fieldManager: url.searchParams.get('fieldManager') ?? '',
    code,
    durationMs: ended - started,
    fault,
    precondition,
  });
}
