/**
 * The emulator's notion of time: timestamps it writes and the CronJob simulation both read it,
 * so tests can move time instead of waiting for it.
 */
export interface Clock {
  now(): number;
}

export type ClockMode =
  | { mode: 'real' }
  | { mode: 'manual'; start?: number }
  | { mode: 'accelerated'; factor: number; start?: number };

type Listener = () => void;

export class EmulatorClock implements Clock {
  private offset = 0;
  private factor = 1;
  private readonly realStart = Date.now();
  private frozenAt: number | undefined;
  private readonly listeners = new Set<Listener>();

  constructor(mode: ClockMode = { mode: 'real' }) {
    this.configure(mode);
  }

  configure(mode: ClockMode): void {
    const current = this.now();
    if (mode.mode === 'manual') {
      this.frozenAt = mode.start ?? current;
      this.factor = 1;
    } else {
      this.frozenAt = undefined;
      this.factor = mode.mode === 'accelerated' ? mode.factor : 1;
      const start = mode.mode === 'accelerated' ? (mode.start ?? current) : Date.now();
      this.offset = start - this.realStart - (Date.now() - this.realStart) * this.factor;
    }
    this.notify();
  }

  now(): number {
    if (this.frozenAt !== undefined) return this.frozenAt;
    return this.realStart + (Date.now() - this.realStart) * this.factor + this.offset;
  }

  /** Moves a manual clock forward (or any clock: it adds an offset) and runs time-driven work. */
  advance(ms: number): void {
    if (this.frozenAt !== undefined) this.frozenAt += ms;
    else this.offset += ms;
    this.notify();
  }

  set(ms: number): void {
    this.advance(ms - this.now());
  }

  get accelerated(): boolean {
    return this.frozenAt === undefined && this.factor !== 1;
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
