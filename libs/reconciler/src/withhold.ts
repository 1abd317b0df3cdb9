import type { V1Container, V1CronJob, V1Volume } from '@kubernetes/client-node';
import type { Action } from './actions.js';
import type { PermittedMounts, Refusal } from './permitted.js';

const TEMPLATE_SPEC = 'spec.jobTemplate.spec.template.spec';

function mayMount(volume: V1Volume, permitted: PermittedMounts): boolean {
  if (volume.secret) return permitted.secrets.has(volume.secret.secretName ?? '');
  if (volume.persistentVolumeClaim) {
    return permitted.claims.has(volume.persistentVolumeClaim.claimName);
  }
  return true;
}

/**
 * The actions that make a CronJob of a refused BackupJob safe: suspended, so it starts no backup,
 * and without a volume of a Secret or claim that is not opted in now, so that neither a resume
 * by hand nor `kubectl create job --from` hands it to a pod. Computed from the CronJob as it is
 * (the refused spec must not reach it); nothing when it is already so. The normal update restores
 * the CronJob from the spec once nothing is refused.
 */
export function withholdActions(
  cronJob: V1CronJob,
  permitted: PermittedMounts,
  refusal: Refusal,
): Action[] {
  const name = cronJob.metadata?.name as string;
  const pod = cronJob.spec?.jobTemplate.spec?.template.spec;
  const volumes = pod?.volumes ?? [];
  const kept = volumes.filter((v) => mayMount(v, permitted));
  const dropped = new Set(volumes.filter((v) => !kept.includes(v)).map((v) => v.name));
  const fields: string[] = [];
  const spec: Record<string, unknown> = {};
  if (cronJob.spec?.suspend !== true) {
    spec.suspend = true;
    fields.push('spec.suspend');
  }
  if (dropped.size > 0 && pod) {
    const unmount = (c: V1Container): V1Container => ({
      ...c,
      volumeMounts: c.volumeMounts?.filter((m) => !dropped.has(m.name)),
    });
    spec.jobTemplate = {
      spec: {
        template: {
          spec: {
            volumes: kept,
            containers: pod.containers.map(unmount),
            initContainers: pod.initContainers?.map(unmount),
          },
        },
      },
    };
    fields.push(`${TEMPLATE_SPEC}.volumes`, `${TEMPLATE_SPEC}.containers`);
  }
  if (fields.length === 0) return [];
  const patch = { metadata: { resourceVersion: cronJob.metadata?.resourceVersion }, spec };
  const noun = dropped.size === 1 ? 'volume' : 'volumes';
  const removed = dropped.size > 0 ? ` and removed the ${noun} ${[...dropped].join(', ')}` : '';
  return [
    { type: 'patchCronJob', name, patch: JSON.parse(JSON.stringify(patch)), fields },
    {
      type: 'emitEvent',
      event: {
        type: 'Warning',
        reason: 'CronJobSuspended',
        action: 'Suspend',
        note: `suspended CronJob ${name}${removed}: ${refusal.message}`,
        related: { apiVersion: 'batch/v1', kind: 'CronJob', name },
      },
    },
  ];
}
