import type { Condition } from '#api';

export type ConditionStatus = Condition['status'];

/** A condition as the reconciler decides it; the transition time comes from the history. */
export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

export const READY = 'Ready';
export const BACKUP_SUCCEEDED = 'BackupSucceeded';
export const BACKUP_OVERDUE = 'BackupOverdue';
export const CLEANUP_SUCCEEDED = 'CleanupSucceeded';

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * apimachinery meta.SetStatusCondition: a new type is appended with lastTransitionTime = now; an
 * existing one keeps its lastTransitionTime unless its status flips, and otherwise only takes the
 * new reason, message and observedGeneration. Returns a new list; the input is not modified.
 */
export function setStatusCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const existing = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    existing && existing.status === input.status ? existing.lastTransitionTime : now.toISOString();
  const next: Condition = { ...input, observedGeneration, lastTransitionTime };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** Whether a condition would read differently to a person: status, reason or message changed. */
export function conditionChanged(existing: Condition | undefined, input: ConditionInput): boolean {
  return (
    existing === undefined ||
    existing.status !== input.status ||
    existing.reason !== input.reason ||
    existing.message !== input.message
  );
}
