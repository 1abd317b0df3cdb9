import {
  ApiException,
  AuthorizationV1Api,
  BatchV1Api,
  CustomObjectsApi,
  EventsV1Api,
  Observable,
  PatchStrategy,
  type ConfigurationOptions,
  type EventsV1Event,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { GROUP, MANAGED_BY_VALUE, PLURAL, VERSION, type BackupJob } from '#api';
import type { KubeClients, ObjectRef } from '#controller';
import { KubeApiError, parseRetryAfter } from '#kube';

/**
 * The controller's clients as a user of client-node alone writes them: its generated APIs, whose
 * answers go through its ObjectSerializer and whose requests go through its middleware and fetch.
 * The baseline's writes are the operator's requests made this way.
 */
export function createGeneratedClients(kc: KubeConfig, requestTimeoutMs = 30_000): KubeClients {
  const objects = kc.makeApiClient(CustomObjectsApi);
  const batch = kc.makeApiClient(BatchV1Api);
  const events = kc.makeApiClient(EventsV1Api);
  const authorization = kc.makeApiClient(AuthorizationV1Api);
  const target = (ref: ObjectRef) => ({ group: GROUP, version: VERSION, plural: PLURAL, ...ref });
  const scoped = (signal: AbortSignal | undefined): KubeClients => {
    const options = (contentType?: string) =>
      ({
        middleware: [
          {
            pre: (context: RequestContext) => {
              const timeout = AbortSignal.timeout(requestTimeoutMs);
              context.setSignal(signal ? AbortSignal.any([timeout, signal]) : timeout);
              context.setHeaderParam('User-Agent', `${MANAGED_BY_VALUE}/worker`);
              if (contentType) context.setHeaderParam('Content-Type', contentType);
              return new Observable(Promise.resolve(context));
            },
            post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
          },
        ],
        middlewareMergeStrategy: 'append',
      }) as ConfigurationOptions;
    const merge = options(PatchStrategy.MergePatch);
    const remove = (uid: string) => ({
      propagationPolicy: 'Background',
      body: { preconditions: { uid } },
    });
    return {
      getBackupJob: (ref) =>
        orUndefined(
          objects.getNamespacedCustomObject(target(ref), options()) as Promise<BackupJob>,
        ),
      patchBackupJob: (ref, body) =>
        apiErrors(objects.patchNamespacedCustomObject({ ...target(ref), body }, merge)),
      patchBackupJobStatus: (ref, body) =>
        apiErrors(objects.patchNamespacedCustomObjectStatus({ ...target(ref), body }, merge)),
      getCronJob: (ref) => orUndefined(batch.readNamespacedCronJob(ref, options())),
      createCronJob: (namespace, body) =>
        apiErrors(batch.createNamespacedCronJob({ namespace, body }, options())),
      patchCronJob: (ref, body) => apiErrors(batch.patchNamespacedCronJob({ ...ref, body }, merge)),
      deleteCronJob: (ref, uid) =>
        apiErrors(batch.deleteNamespacedCronJob({ ...ref, ...remove(uid) }, options())),
      listJobs: async (namespace, labelSelector) =>
        (await apiErrors(batch.listNamespacedJob({ namespace, labelSelector }, options()))).items,
      createJob: (namespace, body) =>
        apiErrors(batch.createNamespacedJob({ namespace, body }, options())),
      deleteJob: (ref, uid) =>
        apiErrors(batch.deleteNamespacedJob({ ...ref, ...remove(uid) }, options())),
      createEvent: (body) =>
        apiErrors(
          events.createNamespacedEvent(
            { namespace: body.metadata.namespace, body: body as unknown as EventsV1Event },
            options(),
          ),
        ),
      patchEvent: (ref, body) => apiErrors(events.patchNamespacedEvent({ ...ref, body }, merge)),
      mayGet: async (namespace, resource, name) => {
        const review = await apiErrors(
          authorization.createSelfSubjectAccessReview(
            {
              body: {
                apiVersion: 'authorization.k8s.io/v1',
                kind: 'SelfSubjectAccessReview',
                spec: { resourceAttributes: { namespace, verb: 'get', resource, name } },
              },
            },
            options(),
          ),
        );
        return review.status?.allowed === true;
      },
      withSignal: scoped,
    };
  };
  return scoped(undefined);
}

/** client-node's ApiException as the controller's KubeApiError, with the Status' reason. */
async function apiErrors<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const { code, body, headers } = err as ApiException<unknown>;
    let status: { reason?: string; message?: string } = {};
    try {
      status = (typeof body === 'string' ? JSON.parse(body) : (body ?? {})) as typeof status;
    } catch {
      status = { message: String(body) };
    }
    const retryAfter = Object.entries(headers ?? {}).find(
      ([name]) => name.toLowerCase() === 'retry-after',
    )?.[1];
    throw new KubeApiError(
      code,
      status.reason,
      status.message ?? err.message,
      parseRetryAfter(retryAfter),
    );
  }
}

async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await apiErrors(call);
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) return undefined;
    throw err;
  }
}
