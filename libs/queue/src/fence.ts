/**
 * Leader terms in Redis: each shard keeps the newest term that wrote to it, and a write that
 * carries an older term is refused. A leader paused past its Lease (a long GC, SIGSTOP, a frozen
 * node) may still believe it leads when it resumes; its late snapshot writes and key adds then meet
 * the successor's term and are refused rather than overwrite newer state. The term is the Lease's
 * `leaseTransitions` when this leader took it, which only grows from one holder to the next.
 */
export class FencedError extends Error {
  constructor(
    /** The term the refused write carried. */
    readonly term: number,
    /** The newer term Redis holds for the shard. */
    readonly fence: number,
    /** How many writes of the batch were refused. */
    readonly refused = 1,
  ) {
    super(`a write of leader term ${term} was refused: term ${fence} leads now`);
    this.name = 'FencedError';
  }
}

export function isFencedError(err: unknown): err is FencedError {
  return err instanceof FencedError || (err as Error | undefined)?.name === 'FencedError';
}

/** Whether a write of `term` may go to a shard whose fence key holds `fence` (null: none yet). */
export function termCurrent(term: number, fence: string | number | null): boolean {
  return fence === null || term >= Number(fence);
}
