import type { Logger, ReconcileRecorder } from '#observability';
import type { ReconcileKey } from './reconcile-key.js';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
/** What a log line shows of a key that may be arbitrarily long. */
const PREVIEW_CHARS = 200;

/** Whether a queue key names an object: a namespace and a name as the API server allows them. */
export function isObjectKey(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  const parts = key.split('/');
  return parts.length === 2 && NAMESPACE.test(parts[0]!) && NAME.test(parts[1]!);
}

/**
 * Anyone who can write to Redis can put any key in the queue. A key that names no object is
 * dropped before it reaches the controller, with a log line and a count, so it neither costs API
 * requests nor fails in a loop, and the worker carries on with the next key.
 */
export function dropInvalidKeys(
  reconcileKey: ReconcileKey,
  log: Logger,
  recorder: ReconcileRecorder,
): ReconcileKey {
  return async (key, run) => {
    if (isObjectKey(key)) return reconcileKey(key, run);
    recorder.invalidKey();
    const text = String(key);
    log.warn('dropped a queue key that is not namespace/name', {
      key: text.slice(0, PREVIEW_CHARS),
      keyLength: text.length,
    });
    return undefined;
  };
}
