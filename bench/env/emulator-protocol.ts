import type { BurstLatency, Progress } from './tracker.js';

/** Operations the emulator host answers over IPC: name → (arguments) → result. */
export interface Ops {
  info(): { url: string; kubeconfigPath: string; pid: number };
  /** Every request waits ms plus up to jitterMs (uniform) before it is served; 0/0 clears. */
  setLatency(args: { ms: number; jitterMs: number }): void;
  /**
   * Creates `${prefix}-${from}` … in one synchronous loop; `converged` also writes what the
   * operator would, and `jobs` that many finished Jobs of each CronJob. `secretRef` names a
   * Secret of its own in each spec, opted in (the bench's operator runs as an admin).
   */
  create(args: {
    prefix: string;
    from: number;
    count: number;
    converged?: boolean;
    jobs?: number;
    secretRef?: boolean;
  }): {
    at: number;
  };
  progress(): Progress;
  burst(args: { since: number }): BurstLatency[];
  changeLatencies(): number[];
  churn(args: { prefix: string; count: number; rate: number; durationMs: number }): Promise<{
    sent: number;
    seconds: number;
  }>;
  hammer(args: { name: string; updates: number; windowMs: number }): Promise<{ updates: number }>;
  /** Requests served so far: `verb group/resource[/subresource] user` → count. */
  requests(): Record<string, number>;
  stop(): Promise<void>;
}

export type OpName = keyof Ops;

export interface HostRequest {
  id: number;
  op: OpName;
  args?: unknown;
}

export interface HostResponse {
  id: number;
  result?: unknown;
  error?: string;
}
