import type { KubeObject } from './types.js';

/**
 * core/v1 and events.k8s.io/v1 Events are one storage seen through two APIs
 * (docs/reference/kubernetes-api/cluster-resources/event-v1/): the store keeps the core/v1 form,
 * and these functions translate field by field the way the real conversion does.
 */
const renamed: [core: string, events: string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];
const shared = ['reason', 'type', 'eventTime', 'series', 'action', 'related', 'reportingInstance'];

function copyFields(from: KubeObject, to: KubeObject, pairs: [string, string][]): KubeObject {
  for (const [a, b] of pairs)
    if (from[a] !== undefined && from[a] !== null && from[a] !== '') to[b] = from[a];
  for (const f of shared) if (from[f] !== undefined && from[f] !== null) to[f] = from[f];
  return to;
}

export function coreToEventsV1(core: KubeObject): KubeObject {
  const out = copyFields(core, { metadata: core.metadata }, renamed);
  if (out.reportingController === undefined && core.source && typeof core.source === 'object') {
    const component = (core.source as { component?: string }).component;
    if (component) out.reportingController = component;
  }
  return out;
}

export function eventsV1ToCore(ev: KubeObject): KubeObject {
  const core = copyFields(
    ev,
    { metadata: ev.metadata },
    renamed.map(([a, b]) => [b, a]),
  );
  if (core.source === undefined && typeof ev.reportingController === 'string') {
    core.source = { component: ev.reportingController };
  }
  const series = ev.series as { count?: number; lastObservedTime?: string } | undefined;
  if (core.count === undefined) core.count = series?.count ?? 1;
  if (core.firstTimestamp === undefined && typeof ev.eventTime === 'string')
    core.firstTimestamp = ev.eventTime.replace(/\.\d+Z$/, 'Z');
  if (core.lastTimestamp === undefined) {
    const last = series?.lastObservedTime ?? (ev.eventTime as string | undefined);
    if (last) core.lastTimestamp = last.replace(/\.\d+Z$/, 'Z');
  }
  return core;
}
