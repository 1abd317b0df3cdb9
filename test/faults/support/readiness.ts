import { eventually, type ManagedProcess, type OperatorSystem } from '#testing';

/** One answer of a process's /readyz. */
export interface ReadinessSample {
  readonly at: number;
  readonly ready: boolean;
}

export interface ReadinessWatch {
  /** Resolves once every process has answered ready at least once. */
  ready(): Promise<void>;
  /** Stops polling; resolves every process's samples, by process name. */
  stop(): Promise<Map<string, ReadinessSample[]>>;
}

/**
 * Polls /readyz of the given processes, as a kubelet's readiness probe would (more often), and
 * keeps every answer: a test can then tell whether readiness dropped and came back.
 */
export function watchReadiness(
  sys: OperatorSystem,
  processes: readonly ManagedProcess[],
  intervalMs = 100,
): ReadinessWatch {
  const samples = new Map<string, ReadinessSample[]>(processes.map((p) => [p.name, []]));
  let polling = true;
  const poll = async (proc: ManagedProcess) => {
    const url = `http://127.0.0.1:${sys.portsOf(proc).health}/readyz`;
    while (polling) {
      const at = Date.now();
      const ready = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
        async (res) => {
          await res.arrayBuffer();
          return res.ok;
        },
        () => false,
      );
      samples.get(proc.name)!.push({ at, ready });
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  const loops = processes.map(poll);
  return {
    ready: () =>
      eventually(
        'every process to answer ready',
        () => [...samples.values()].every((list) => list.some((s) => s.ready)),
        30_000,
        50,
      ).then(() => undefined),
    async stop() {
      polling = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

/**
 * What is wrong with one process's readiness around a fault at `faultAt`: it must have been
 * ready before, not ready at some point after, and ready at the end.
 */
export function readinessProblem(
  samples: readonly ReadinessSample[],
  faultAt: number,
): string | undefined {
  const before = samples.filter((s) => s.at < faultAt);
  const afterFault = samples.filter((s) => s.at >= faultAt);
  if (!before.some((s) => s.ready)) return 'never ready before the fault';
  if (!afterFault.some((s) => !s.ready)) return 'readiness did not drop after the fault';
  if (!afterFault.at(-1)?.ready) return 'not ready again at the end';
  return undefined;
}
