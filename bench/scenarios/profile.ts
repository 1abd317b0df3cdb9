import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfiles } from '../lib/cpuprofile.js';
import type { Table } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { coldStart } from './cold-start.js';
import { bestBaseline, operatorSpec, type Scenario, type SystemSpec } from './context.js';

const pct = (share: number) => `${round(share * 100, 1)} %`;

export const profileScenario: Scenario = {
  name: 'profile',
  title: 'Where the CPU goes: profiles of a cold start',
  async run(ctx) {
    const { objects, workers, latencyMs } = ctx.size.profile;
    // The product's profile explains its misses; the baseline is profiled only when it runs alone.
    const specs: SystemSpec[] = [
      ctx.systems.has('operator') ? operatorSpec(ctx, workers) : bestBaseline(ctx, latencyMs),
    ];
    const root = mkdtempSync(join(tmpdir(), 'bench-profile-'));
    const tables: Table[] = [];
    const raw: unknown[] = [];
    try {
      for (const [i, spec] of specs.entries()) {
        const dir = join(root, String(i));
        mkdirSync(dir);
        const run = await coldStart(
          ctx,
          spec,
          objects,
          latencyMs,
          ctx.size.coldStart.capSeconds,
          dir,
        );
        const profiles = summarizeProfiles(dir);
        raw.push({ run, profiles });
        tables.push({
          title: `${spec.label}, ${objects} BackupJobs at ${latencyMs} ms: ${run.seconds} s; CPU per process (cores = CPU s ÷ wall s) and its top areas by self time`,
          columns: [
            { key: 'process', label: 'process' },
            { key: 'cpu', label: 'CPU s' },
            { key: 'cores', label: 'cores' },
            { key: 'areas', label: 'self time by area' },
            { key: 'functions', label: 'top functions by self time' },
          ],
          rows: Object.entries(run.cpu)
            .filter(([name]) => name !== 'operator')
            .map(([name, cpu]) => {
              const p = profiles.find((f) => f.file === `${name}.cpuprofile`)?.summary;
              return {
                process: name,
                cpu,
                cores: round(cpu / run.seconds),
                areas: p
                  ? p.areas
                      .slice(0, 5)
                      .map((a) => `${a.name} ${pct(a.share)}`)
                      .join('; ')
                  : '–',
                functions: p
                  ? p.functions
                      .slice(0, 4)
                      .map((f) => `${f.name} ${pct(f.share)}`)
                      .join('; ')
                  : '–',
              };
            }),
        });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    return {
      settings: {
        objects,
        operatorWorkers: workers,
        latencyMs,
        flags: '--cpu-prof on every process',
      },
      tables,
      notes: [
        'Profiling slows every process a little, so these runs are not compared with the cold start table; they show which process is busy and on what. "(idle)" is time the process waited; "(program)" and "(garbage collector)" are V8\'s own.',
      ],
      raw,
    };
  },
};
