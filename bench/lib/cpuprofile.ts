import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The parts of a V8 .cpuprofile (written by `node --cpu-prof`) that self time needs. */
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  readonly name: string;
  /** Share of all samples (0..1). */
  readonly share: number;
  readonly ms: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Self time by function, largest first. */
  readonly functions: readonly HotSpot[];
  /** Self time by where the code lives: a package, a libs/<name>, node internals, GC, idle. */
  readonly areas: readonly HotSpot[];
}

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const own =
    /\/dist\/((?:libs|apps|bench)\/[^/]+)/.exec(url) ??
    /\/((?:libs|apps|bench)\/[^/]+)\//.exec(url);
  if (own) return own[1] as string;
  if (url.startsWith('node:')) return 'node internals';
  return url.replace(/^.*\//, '');
}

function top(map: Map<string, number>, total: number, n: number): HotSpot[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, share: us / total, ms: us / 1000 }));
}

/** Self time per function and per area, from the samples and their time deltas. */
function summarizeProfile(profile: CpuProfile, n = 10): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    total += us;
    const file = frame.url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    const name = `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const a = area(frame.url, frame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
  });
  return {
    totalMs: total / 1000,
    functions: top(fns, total || 1, n),
    areas: top(areas, total || 1, n),
  };
}

/** Every profile a directory holds (one per process that exited), summarised. */
export function summarizeProfiles(dir: string): { file: string; summary: ProfileSummary }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((file) => ({
      file,
      summary: summarizeProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile),
    }));
}
