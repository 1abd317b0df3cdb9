import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, pathNotFound } from '../errors.js';
import type { EmulatorClock } from '../clock.js';
import type { ErrorFault, Faults, LatencyFault } from '../faults.js';
import type { RequestLog } from '../request-log.js';
import type { KubeObject } from '../types.js';
import type { WatchHub, WatchMatch } from './watch-hub.js';
import { readBody } from './body.js';
import { sendError, sendJson } from './respond.js';

export const CONTROL_PREFIX = '/__emulator/';

type Body = Record<string, unknown>;

/** What the control routes drive; declared here so that the Emulator depends on them, not back. */
export interface ControlTarget {
  readonly faults: Faults;
  readonly watches: WatchHub;
  readonly log: RequestLog;
  readonly clock: EmulatorClock;
  compact(): number;
  runCronJob(namespace: string, name: string): KubeObject;
  completeJob(namespace: string, name: string): KubeObject;
  failJob(namespace: string, name: string, reason?: string, message?: string): KubeObject;
}

/**
 * Runtime control over HTTP for the CLI (`npm run apiserver`), so faults, time and Job outcomes
 * can be driven from a shell: `curl -XPOST localhost:6443/__emulator/watches/expire -d '{}'`.
 * Not part of the Kubernetes API; not recorded in the request log.
 */
export async function handleControl(
  emu: ControlTarget,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  try {
    const raw = await readBody(req);
    const body = (raw.length ? JSON.parse(raw.toString('utf8')) : {}) as Body;
    const parts = path.slice(CONTROL_PREFIX.length).split('/').filter(Boolean);
    sendJson(
      res,
      200,
      route(
        emu,
        req.method ?? 'GET',
        parts,
        body,
        new URL(req.url ?? '/', 'http://x').searchParams,
      ) ?? {},
    );
  } catch (e) {
    sendError(res, e instanceof SyntaxError ? badRequest(`control request body: ${e.message}`) : e);
  }
}

function route(
  emu: ControlTarget,
  method: string,
  parts: string[],
  body: Body,
  query: URLSearchParams,
): unknown {
  const [area, a, b, c] = parts;
  const match = body.match as WatchMatch | undefined;
  switch (`${method} ${area}`) {
    case 'POST faults':
      if (a === 'latency') return { id: emu.faults.addLatency(body as unknown as LatencyFault) };
      if (a === 'error') return { id: emu.faults.addError(body as unknown as ErrorFault) };
      break;
    case 'DELETE faults':
      if (a) emu.faults.remove(Number(a));
      else emu.faults.clear();
      return {};
    case 'POST watches':
      if (a === 'close' || a === 'drop' || a === 'stall' || a === 'expire')
        return { count: emu.watches[a](match) };
      break;
    case 'POST compact':
      return { resourceVersion: emu.compact() };
    case 'POST clock':
      if (a === 'advance') emu.clock.advance(Number(body.ms ?? 0));
      return { now: new Date(emu.clock.now()).toISOString() };
    case 'POST cronjobs':
      if (a && b && c === 'run') return emu.runCronJob(a, b);
      break;
    case 'POST jobs':
      if (a && b && c === 'succeed') return emu.completeJob(a, b);
      if (a && b && c === 'fail')
        return emu.failJob(
          a,
          b,
          body.reason as string | undefined,
          body.message as string | undefined,
        );
      break;
    case 'GET requests': {
      const filter: Record<string, string | number> = Object.fromEntries(query);
      for (const k of ['code', 'since'] as const)
        if (filter[k] !== undefined) filter[k] = Number(filter[k]);
      return { count: emu.log.count(filter), summary: emu.log.summary() };
    }
  }
  throw pathNotFound();
}
