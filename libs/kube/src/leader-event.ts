import { errorFields, type Log } from './log.js';
import type { RestClient } from './rest.js';
import { microTime, type Lease } from './resourcelock.js';

/**
 * client-go's "became leader" Event on the Lease (events.k8s.io/v1), so `kubectl describe lease`
 * and `kubectl get events` show who led when. Best effort: a failed Event never affects leading.
 */
export async function recordLeaderEvent(
  rest: RestClient,
  lease: Lease,
  identity: string,
  controller: string,
  log: Log,
): Promise<void> {
  const { name, namespace } = lease.metadata;
  try {
    await rest.request({
      method: 'POST',
      path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace ?? '')}/events`,
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { generateName: `${name}.`, namespace },
        eventTime: microTime(new Date()),
        reportingController: controller,
        reportingInstance: identity,
        action: 'LeaderElection',
        reason: 'LeaderElection',
        type: 'Normal',
        note: `${identity} became leader`,
        regarding: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          name,
          namespace,
          uid: lease.metadata.uid,
          resourceVersion: lease.metadata.resourceVersion,
        },
      },
    });
  } catch (err) {
    log.warn('could not record the leader election Event', errorFields(err));
  }
}
