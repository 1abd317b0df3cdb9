import { API_VERSION, KIND } from '#api';
import type { OperatorSystem } from '#testing';
import { backupJobManifest } from '../../e2e/support.js';

/** The namespace every fault test's BackupJobs live in. */
export const NAMESPACE = 'faults';

// Valid schedules and zones only: every change must be one the operator can converge on.
const SCHEDULES = ['10 2 * * *', '0 3 * * *', '30 4 * * 1', '15 1 1 * *', '@daily', '@weekly'];
const TIME_ZONES = [null, 'UTC', 'Europe/Paris', 'America/New_York'];

export interface LoadOptions {
  /** BackupJobs created while the load runs, on top of those that exist. */
  readonly creates: number;
  /** Time between two writes (each write creates one BackupJob or changes the spec of one). */
  readonly intervalMs?: number;
}

export interface Load {
  /** Stops writing; resolves once the last write is done. */
  stop(): Promise<void>;
}

/**
 * The BackupJobs of one test, written straight into the emulator's store (no HTTP, so no
 * injected fault slows the load down), with the time of each one's last spec change: the lower
 * bound for the reconcile that must observe it.
 */
export class Fleet {
  readonly names: string[] = [];
  private readonly changedAt = new Map<string, number>();
  private changes = 0;
  private readonly loads = new Set<Load>();

  constructor(private readonly sys: OperatorSystem) {}

  create(count: number): void {
    for (let i = 0; i < count; i++) {
      const name = `bj-${String(this.names.length).padStart(3, '0')}`;
      const schedule = SCHEDULES[this.names.length % SCHEDULES.length] as string;
      this.sys.emulator.objects.create(backupJobManifest(NAMESPACE, name, { schedule }));
      this.names.push(name);
      this.changedAt.set(name, Date.now());
    }
  }

  /** Changes what the CronJob must carry: schedule, suspend and timeZone in turn. */
  change(name: string): void {
    const n = ++this.changes;
    const spec = {
      schedule: SCHEDULES[n % SCHEDULES.length],
      suspend: n % 3 === 0,
      timeZone: TIME_ZONES[n % TIME_ZONES.length],
    };
    const objects = this.sys.emulator.objects;
    const before = objects.get(API_VERSION, KIND, name, NAMESPACE)?.metadata.generation;
    const after = objects.patch(API_VERSION, KIND, name, NAMESPACE, { spec }).metadata.generation;
    // A patch that happens to repeat the current spec changes nothing and owes no reconcile.
    if (after !== before) this.changedAt.set(name, Date.now());
  }

  changeRandom(): void {
    this.change(this.names[Math.floor(Math.random() * this.names.length)] as string);
  }

  /** When the spec of `name` last changed (ms since the epoch, taken after the write). */
  lastChange(name: string): number {
    return this.changedAt.get(name) ?? 0;
  }

  /** Creates `creates` BackupJobs and changes random ones, one write per interval, until stopped. */
  startLoad(options: LoadOptions): Load {
    let stopped = false;
    let created = 0;
    const interval = options.intervalMs ?? 40;
    const loop = (async () => {
      for (let tick = 0; !stopped; tick++) {
        if (tick % 2 === 0 && created < options.creates) {
          this.create(1);
          created++;
        } else {
          this.changeRandom();
        }
        await new Promise((r) => setTimeout(r, interval));
      }
    })();
    const load: Load = {
      stop: async () => {
        stopped = true;
        this.loads.delete(load);
        await loop;
      },
    };
    this.loads.add(load);
    return load;
  }

  /** Stops every load still running (a test that failed half-way left it going). */
  async stopLoads(): Promise<void> {
    await Promise.all([...this.loads].map((load) => load.stop()));
  }
}
