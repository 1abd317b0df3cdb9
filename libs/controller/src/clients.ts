import type { KubeConfig, V1CronJob, V1Job } from '@kubernetes/client-node';
import { GROUP, MANAGED_BY_VALUE, PLURAL, VERSION, type BackupJob } from '#api';
import { isApiError, RestClient, type RequestOptions } from '#kube';

/**
 * The API server names the field manager of a write without `fieldManager` after the User-Agent
 * up to its first '/', and the watcher tells the operator's own writes from anyone else's by
 * that name.
 */
const USER_AGENT = `${MANAGED_BY_VALUE}/worker`;

const MERGE_PATCH = 'application/merge-patch+json';

/** An events.k8s.io/v1 Event as sent: its times are MicroTime strings (see microTime). */
export type EventBody = Record<string, unknown> & { metadata: { name: string; namespace: string } };

/** A namespaced object's coordinates. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The requests the controller makes, one method each. Every write of an object the operator
 * decided on carries a precondition (a resourceVersion in the body, a uid for deletes). Failures
 * are KubeApiErrors; a NotFound on a read resolves to undefined. Writes whose answer the
 * controller does not use resolve to whatever the server sent.
 */
export interface KubeClients {
  getBackupJob(ref: ObjectRef): Promise<BackupJob | undefined>;
  /** A JSON merge patch of the BackupJob's metadata or spec; the BackupJob as it now is. */
  patchBackupJob(ref: ObjectRef, patch: object): Promise<BackupJob>;
  /** A JSON merge patch of the status subresource; the BackupJob as it now is. */
  patchBackupJobStatus(ref: ObjectRef, patch: object): Promise<BackupJob>;
  getCronJob(ref: ObjectRef): Promise<V1CronJob | undefined>;
  createCronJob(namespace: string, cronJob: V1CronJob): Promise<unknown>;
  patchCronJob(ref: ObjectRef, patch: object): Promise<unknown>;
  /** Background propagation removes a CronJob's Jobs; the uid spares a newer namesake. */
  deleteCronJob(ref: ObjectRef, uid: string): Promise<unknown>;
  listJobs(namespace: string, labelSelector: string): Promise<V1Job[]>;
  createJob(namespace: string, job: V1Job): Promise<unknown>;
  deleteJob(ref: ObjectRef, uid: string): Promise<unknown>;
  createEvent(event: EventBody): Promise<unknown>;
  patchEvent(ref: ObjectRef, patch: object): Promise<unknown>;
  /** Whether the caller may `get` the object: a SelfSubjectAccessReview. */
  mayGet(namespace: string, resource: string, name: string): Promise<boolean>;
  /** The same clients, with every request also aborted when `signal` fires (lease lost, shutdown). */
  withSignal(signal: AbortSignal | undefined): KubeClients;
}

/** A MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

const backupJobPath = ({ namespace, name }: ObjectRef) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}/${name}`;
const batchPath = (namespace: string, plural: 'cronjobs' | 'jobs', name?: string) =>
  `/apis/batch/v1/namespaces/${namespace}/${plural}${name === undefined ? '' : `/${name}`}`;

function deleteOptions(uid: string) {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy: 'Background',
    preconditions: { uid },
  };
}

/** The controller's clients over the project's RestClient, each request bounded by `timeoutMs`. */
export function createKubeClients(kc: KubeConfig, requestTimeoutMs = 30_000): KubeClients {
  const rest = new RestClient(kc, requestTimeoutMs, { 'user-agent': USER_AGENT });
  const scoped = (signal: AbortSignal | undefined): KubeClients => {
    const send = <T>(options: RequestOptions) => rest.request<T>({ ...options, signal });
    const orUndefined = <T>(options: RequestOptions) =>
      rest.request<T>({ ...options, signal }).catch((err: unknown) => {
        if (isApiError(err, 404)) return undefined;
        throw err;
      });
    const patch = <T>(path: string, body: object) =>
      send<T>({ method: 'PATCH', path, body, contentType: MERGE_PATCH });
    return {
      getBackupJob: (ref) => orUndefined<BackupJob>({ path: backupJobPath(ref) }),
      patchBackupJob: (ref, body) => patch<BackupJob>(backupJobPath(ref), body),
      patchBackupJobStatus: (ref, body) => patch<BackupJob>(`${backupJobPath(ref)}/status`, body),
      getCronJob: (ref) =>
        orUndefined<V1CronJob>({ path: batchPath(ref.namespace, 'cronjobs', ref.name) }),
      createCronJob: (namespace, body) =>
        send({ method: 'POST', path: batchPath(namespace, 'cronjobs'), body }),
      patchCronJob: (ref, body) => patch(batchPath(ref.namespace, 'cronjobs', ref.name), body),
      deleteCronJob: (ref, uid) =>
        send({
          method: 'DELETE',
          path: batchPath(ref.namespace, 'cronjobs', ref.name),
          body: deleteOptions(uid),
        }),
      listJobs: async (namespace, labelSelector) => {
        const path = batchPath(namespace, 'jobs');
        return (await send<{ items: V1Job[] }>({ path, query: { labelSelector } })).items;
      },
      createJob: (namespace, body) =>
        send({ method: 'POST', path: batchPath(namespace, 'jobs'), body }),
      deleteJob: (ref, uid) =>
        send({
          method: 'DELETE',
          path: batchPath(ref.namespace, 'jobs', ref.name),
          body: deleteOptions(uid),
        }),
      createEvent: (body) =>
        send({
          method: 'POST',
          path: `/apis/events.k8s.io/v1/namespaces/${body.metadata.namespace}/events`,
          body,
        }),
      patchEvent: (ref, body) =>
        patch(`/apis/events.k8s.io/v1/namespaces/${ref.namespace}/events/${ref.name}`, body),
      mayGet: async (namespace, resource, name) => {
        const review = await send<{ status?: { allowed?: boolean } }>({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { namespace, verb: 'get', resource, name } },
          },
        });
        return review.status?.allowed === true;
      },
      withSignal: scoped,
    };
  };
  return scoped(undefined);
}
