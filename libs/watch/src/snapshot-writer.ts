import type { SnapshotStore, WorldSnapshot } from '#snapshot';
import type { KeySink, SnapshotWriter } from './key-pump.js';

/**
 * Writes the snapshots of the given keys as `snapshotOf` builds them now, and resolves only once
 * the replicas hold them, as the queue does for its keys. A write only the primary acknowledged
 * is lost if a replica that missed it is promoted: Redis would then serve the key's older
 * snapshot, its key would still run, and every write computed from it would meet 409 Conflict
 * until the object changed again, since the watcher would not know to write it once more. The
 * store must write on the sink's connection (WorkQueue.client), which is what the sink confirms;
 * a sink without confirm (a test's) leaves them as the primary acknowledged them.
 */
export function confirmedSnapshotWriter(
  store: SnapshotStore,
  sink: KeySink,
  snapshotOf: (key: string) => WorldSnapshot | undefined,
): SnapshotWriter {
  return {
    async write(keys, term) {
      const since = sink.connectionChanges?.();
      await store.write(
        keys.map((key) => [key, snapshotOf(key)] as const),
        term,
      );
      if (since !== undefined) await sink.confirm?.(keys, since);
    },
  };
}
