import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on every mainstream Linux). */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds a live process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses; fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / clockTicks();
}

/** Resident set size in bytes (VmRSS), and its peak (VmHWM). */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 };
}

/**
 * Times the process's main thread has gone to sleep and been woken (its voluntary context
 * switches): an idle event loop wakes once per timer, socket read or signal.
 */
export function mainThreadWakeups(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
}
