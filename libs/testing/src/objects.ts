import type { KubeObject } from '#apiserver-emulator';

/** The condition of that type in an object's status (a BackupJob's, as any test holds it). */
export function condition<C extends { readonly type: string }>(
  object: { readonly status?: { readonly conditions?: readonly C[] } } | undefined,
  type: string,
): C | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}

/**
 * A CronJob someone else made, with the name the operator would give its own: no owner reference
 * and none of the operator's labels, so the operator must leave it alone.
 */
export function foreignCronJob(namespace: string, name: string, schedule = '@yearly'): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace },
    spec: {
      schedule,
      jobTemplate: {
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'x', image: 'busybox' }] },
          },
        },
      },
    },
  };
}

/** A finished Job's status, as the Job controller writes it (no kubelet runs here). */
export function jobStatus(state: 'succeeded' | 'failed', at: Date): Record<string, unknown> {
  const time = at.toISOString();
  const started = new Date(at.getTime() - 60_000).toISOString();
  if (state === 'succeeded') {
    return {
      startTime: started,
      completionTime: time,
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: time },
        { type: 'Complete', status: 'True', lastTransitionTime: time },
      ],
    };
  }
  const reason = 'BackoffLimitExceeded';
  return {
    startTime: started,
    failed: 1,
    conditions: [
      { type: 'FailureTarget', status: 'True', reason, lastTransitionTime: time },
      {
        type: 'Failed',
        status: 'True',
        reason,
        message: 'Job has reached the specified backoff limit',
        lastTransitionTime: time,
      },
    ],
  };
}
