import { isDeepStrictEqual } from 'node:util';
import type { BackupJob, BackupJobStatus } from '#api';
import type { Action, EventSpec } from './actions.js';
import { READY } from './conditions.js';
import { soundStatus } from './shape.js';
import {
  conditionChanged,
  findCondition,
  setStatusCondition,
  type ConditionInput,
} from './conditions.js';

/**
 * The next status, built from the current one with SetStatusCondition semantics. It records
 * which conditions read differently than before, which is what Events are emitted for, so a
 * converged object emits nothing.
 */
export class StatusDraft {
  private status: BackupJobStatus;
  private readonly events: EventSpec[] = [];

  /**
   * `observed: false` for a status that reports a failed run: that generation was not reconciled,
   * so status.observedGeneration keeps what it says.
   */
  constructor(
    private readonly backupJob: BackupJob,
    private readonly now: Date,
    private readonly options: { readonly observed: boolean } = { observed: true },
  ) {
    // Built from the sound part of what is stored; finish() compares with all of it, so unsound
    // fields are written away.
    this.status = structuredClone(soundStatus(backupJob.status));
  }

  get current(): BackupJobStatus {
    return this.status;
  }

  /**
   * Sets a condition; when it reads differently than before, queues `event` (if any), whose
   * note defaults to the condition's message.
   */
  condition(input: ConditionInput, event?: Omit<EventSpec, 'note'> & { note?: string }): boolean {
    const changed = conditionChanged(findCondition(this.status.conditions, input.type), input);
    const generation = this.backupJob.metadata.generation ?? 0;
    this.status.conditions = setStatusCondition(
      this.status.conditions,
      input,
      generation,
      this.now,
    );
    if (changed && event) this.events.push({ ...event, note: event.note ?? input.message });
    return changed;
  }

  set(fields: Partial<BackupJobStatus>): void {
    this.status = { ...this.status, ...fields };
  }

  /** The complete next status, or undefined when it equals what is stored (nothing to write). */
  finish(): BackupJobStatus | undefined {
    const observed = this.options.observed
      ? { observedGeneration: this.backupJob.metadata.generation ?? 0 }
      : {};
    const next = JSON.parse(JSON.stringify({ ...this.status, ...observed })) as BackupJobStatus;
    const stored = JSON.parse(JSON.stringify(this.backupJob.status ?? {})) as BackupJobStatus;
    return isDeepStrictEqual(next, stored) ? undefined : next;
  }

  /** Events for conditions that changed; emitted after the status write that records them. */
  transitionEvents(): readonly EventSpec[] {
    return this.events;
  }
}

/** updateStatus when anything changed, then the Events the changes call for. */
export function statusActions(draft: StatusDraft): Action[] {
  const status = draft.finish();
  if (!status) return [];
  return [
    { type: 'updateStatus', status },
    ...draft.transitionEvents().map((event): Action => ({ type: 'emitEvent', event })),
  ];
}

/** Ready=False plus a Warning of the same reason when it newly reads so; the summary says why. */
export function notReady(
  draft: StatusDraft,
  reason: string,
  message: string,
  action: string,
): void {
  draft.condition(
    { type: READY, status: 'False', reason, message },
    { type: 'Warning', reason, action },
  );
  draft.set({ ready: false, message });
}
