/** Calls per command from INFO commandstats. */
export function parseCommandStats(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    out[(m[1] as string).toLowerCase()] = Number(m[2]);
  }
  return out;
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro']);

/**
 * commandstats counts the commands a Lua script runs inside Redis as well as the script call
 * itself: `total` is Redis' work, `scripts` the script invocations among them.
 */
export function totals(stats: Record<string, number>): { total: number; scripts: number } {
  let total = 0;
  let scripts = 0;
  for (const [cmd, n] of Object.entries(stats)) {
    total += n;
    if (SCRIPT_COMMANDS.has(cmd)) scripts += n;
  }
  return { total, scripts };
}
