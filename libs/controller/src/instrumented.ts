import type { ReconcileRecorder } from '#observability';
import { isTerminalError, type HandlerResult } from '#queue';
import type { ReconcileKey } from './reconcile-key.js';

/**
 * Counts every reconcile in controller-runtime's metrics: result label, duration, errors,
 * terminal errors and the number running now.
 */
export function instrumentReconcileKey(
  reconcileKey: ReconcileKey,
  recorder: ReconcileRecorder,
): ReconcileKey {
  return async (key, run): Promise<HandlerResult> => {
    const done = recorder.start();
    try {
      const result = await reconcileKey(key, run);
      done(result?.requeueAfter ? 'requeue_after' : 'success');
      return result;
    } catch (err) {
      done('error', { terminal: isTerminalError(err) });
      throw err;
    }
  };
}
