import { KubeConfig } from '@kubernetes/client-node';
import { BACKUPJOBS, backupJobCrd } from '#api';
import { start, type Emulator } from '#apiserver-emulator';
import { collectionPath, objectPath, RestClient, type KubeList, type KubeObject } from '#kube';

/** The project's API server emulator with the BackupJob CRD installed, reached over HTTP. */
export interface KubeCluster {
  readonly emu: Emulator;
  readonly rest: RestClient;
  readonly backupJobs: BackupJobApi;
  restAs(user: string): RestClient;
  createNamespace(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startKubeCluster(
  options: { bookmarkIntervalMs?: number } = {},
): Promise<KubeCluster> {
  const emu = await start({
    port: 0,
    namespaces: ['ops', 'dev'],
    // Frequent bookmarks keep healthy watches audibly alive under the tests' short watchdogs.
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 100,
  });
  const rest = restFrom(emu.kubeconfig);
  await rest.request({
    method: 'POST',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    body: backupJobCrd(),
  });
  return {
    emu,
    rest,
    backupJobs: new BackupJobApi(rest),
    restAs(user) {
      const token = `token-${user}`;
      emu.core.authn.addStaticToken(token, { username: user, groups: ['system:masters'] });
      return restFrom(emu.kubeconfigForToken(token, user));
    },
    async createNamespace(name) {
      await rest.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      });
    },
    stop: () => emu.stop(),
  };
}

export function restFrom(kubeconfig: string): RestClient {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return new RestClient(kc, 5000);
}

/** BackupJob writes over the REST API, each with an explicit field manager. */
export class BackupJobApi {
  constructor(private readonly rest: RestClient) {}

  create(namespace: string, name: string, fieldManager = 'kubectl-create'): Promise<KubeObject> {
    return this.rest.request({
      method: 'POST',
      path: collectionPath(BACKUPJOBS, namespace),
      query: { fieldManager },
      body: {
        apiVersion: 'ops.example.com/v1alpha1',
        kind: 'BackupJob',
        metadata: { name, namespace },
        spec: { target: 'mysql', schedule: '@daily' },
      },
    });
  }

  patch(
    namespace: string,
    name: string,
    patch: unknown,
    fieldManager = 'kubectl-edit',
  ): Promise<KubeObject> {
    return this.rest.request({
      method: 'PATCH',
      path: objectPath(BACKUPJOBS, namespace, name),
      query: { fieldManager },
      contentType: 'application/merge-patch+json',
      body: patch,
    });
  }

  patchStatus(
    namespace: string,
    name: string,
    status: unknown,
    fieldManager: string,
  ): Promise<KubeObject> {
    return this.rest.request({
      method: 'PATCH',
      path: `${objectPath(BACKUPJOBS, namespace, name)}/status`,
      query: { fieldManager },
      contentType: 'application/merge-patch+json',
      body: { status },
    });
  }

  delete(namespace: string, name: string): Promise<unknown> {
    return this.rest.request({ method: 'DELETE', path: objectPath(BACKUPJOBS, namespace, name) });
  }

  /** `namespace/name` → resourceVersion of every BackupJob on the server. */
  async versions(): Promise<Map<string, string>> {
    const list = await this.rest.request<KubeList<KubeObject>>({
      path: collectionPath(BACKUPJOBS),
    });
    return new Map(
      (list.items ?? []).map((o) => [
        `${o.metadata.namespace}/${o.metadata.name}`,
        o.metadata.resourceVersion ?? '',
      ]),
    );
  }
}
