import { API_VERSION, KIND } from '#api';
import type { KubeObject } from '#apiserver-emulator';
import type { OperatorSystem } from '#testing';
import { backupJobManifest } from '../e2e/support.js';
import type { Rng } from './rng.js';

/** What the CronJob must carry; every combination is one the operator can converge on. */
export interface CronJobFields {
  readonly schedule: string;
  readonly suspend: boolean;
  readonly timeZone: string | null;
}

const SCHEDULES = ['10 2 * * *', '0 3 * * *', '30 4 * * 1', '15 1 1 * *', '@daily', '@weekly'];
const TIME_ZONES = [null, 'UTC', 'Europe/Paris', 'America/New_York'];

export type ChurnOp = 'create' | 'change' | 'flip' | 'delete' | 'recreate';

/** One thing the churn did to one BackupJob, for a violation's history. */
export interface ChurnEvent {
  readonly time: number;
  readonly op: ChurnOp | 'flip back';
  readonly detail: string;
}

/**
 * The BackupJobs of a soak and what is done to them: spec changes, A→B→A flips (a change and its
 * undoing within a fraction of a second), deletes and re-creates under the same name. Writes go
 * straight into the emulator's store, so no injected fault slows the churn down, and each object's
 * history is kept for the report.
 */
export class Churn {
  readonly names: string[] = [];
  private readonly history = new Map<string, ChurnEvent[]>();
  private readonly deleting = new Set<string>();
  private readonly lastChanged = new Map<string, number>();
  private pendingFlips = 0;

  constructor(
    private readonly sys: OperatorSystem,
    private readonly namespace: string,
    private readonly rng: Rng,
  ) {}

  /** Creates `count` BackupJobs with random fields. */
  create(count: number): void {
    for (let i = 0; i < count; i++) {
      const name = `bj-${String(this.names.length).padStart(3, '0')}`;
      this.names.push(name);
      this.make(name, 'create');
    }
  }

  /** One random step: mostly spec changes, sometimes a flip, a delete or a re-create. */
  step(): void {
    const gone = [...this.deleting].filter((name) => !this.get(name));
    if (gone.length > 0 && this.rng.chance(0.5)) {
      const name = this.rng.pick(gone);
      this.deleting.delete(name);
      this.make(name, 'recreate');
      return;
    }
    const live = this.names.filter((name) => !this.deleting.has(name) && this.get(name));
    if (live.length === 0) return;
    const name = this.rng.pick(live);
    const op = this.rng.weighted<ChurnOp>([
      ['change', 6],
      ['flip', 2],
      ['delete', 1],
    ]);
    if (op === 'delete') {
      this.deleting.add(name);
      this.sys.emulator.objects.delete(API_VERSION, KIND, name, this.namespace);
      this.record(name, 'delete', '');
    } else if (op === 'flip') {
      this.flip(name);
    } else {
      this.change(name, this.randomFields(), 'change');
    }
  }

  /** Resolves once every flip's way back was written. */
  async settled(): Promise<void> {
    while (this.pendingFlips > 0) await new Promise((r) => setTimeout(r, 20));
  }

  /** The BackupJob as the API server has it now. */
  get(name: string): (KubeObject & { spec: Partial<CronJobFields> }) | undefined {
    return this.sys.emulator.objects.get(API_VERSION, KIND, name, this.namespace);
  }

  /** Names deleted and not made again: they must end gone. */
  get deleted(): readonly string[] {
    return [...this.deleting];
  }

  /** When the spec of `name` last changed (ms since the epoch, taken after the write). */
  lastChange(name: string): number {
    return this.lastChanged.get(name) ?? 0;
  }

  historyOf(name: string): readonly ChurnEvent[] {
    return this.history.get(name) ?? [];
  }

  private make(name: string, op: 'create' | 'recreate'): void {
    const fields = this.randomFields();
    this.sys.emulator.objects.create(backupJobManifest(this.namespace, name, { ...fields }));
    this.lastChanged.set(name, Date.now());
    this.record(name, op, describe(fields));
  }

  private flip(name: string): void {
    const before = this.get(name)?.spec;
    if (!before) return;
    const back: CronJobFields = {
      schedule: before.schedule ?? SCHEDULES[0]!,
      suspend: before.suspend ?? false,
      timeZone: before.timeZone ?? null,
    };
    this.change(name, this.randomFields(), 'flip');
    this.pendingFlips++;
    setTimeout(
      () => {
        this.pendingFlips--;
        if (this.deleting.has(name) || !this.get(name)) return;
        this.change(name, back, 'flip back');
      },
      this.rng.between(20, 400),
    );
  }

  private change(name: string, fields: CronJobFields, op: ChurnEvent['op']): void {
    const objects = this.sys.emulator.objects;
    const before = this.get(name)?.metadata.generation;
    const after = objects.patch(API_VERSION, KIND, name, this.namespace, { spec: fields }).metadata
      .generation;
    // A patch that repeats the current spec changes nothing and owes no reconcile.
    if (after !== before) this.lastChanged.set(name, Date.now());
    this.record(name, op, `${describe(fields)} → generation ${after}`);
  }

  private randomFields(): CronJobFields {
    return {
      schedule: this.rng.pick(SCHEDULES),
      suspend: this.rng.chance(0.25),
      timeZone: this.rng.pick(TIME_ZONES),
    };
  }

  private record(name: string, op: ChurnEvent['op'], detail: string): void {
    const events = this.history.get(name) ?? [];
    events.push({ time: Date.now(), op, detail });
    this.history.set(name, events);
  }
}

function describe(fields: CronJobFields): string {
  return `${fields.schedule}${fields.suspend ? ' suspended' : ''}${fields.timeZone ? ` ${fields.timeZone}` : ''}`;
}
