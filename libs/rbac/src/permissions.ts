import { GROUP, PLURAL } from '#api';

/**
 * The Kubernetes API calls each process makes, as RBAC rules: the one source of truth for
 * config/rbac and the Helm chart's Roles (`npm run gen`). Grant nothing the code does not call;
 * every rule says which call needs it. No rule touches Secrets: the backup pod mounts the
 * credentials Secret by name, the operator never reads it. Whether a namespace opted a Secret in
 * is asked with a SelfSubjectAccessReview, which every authenticated identity may create
 * (system:basic-user), so it needs no rule either.
 */

export const COMPONENTS = ['watcher', 'worker'] as const;
export type Component = (typeof COMPONENTS)[number];

/**
 * `cluster`: wherever BackupJobs are watched — a ClusterRole, or a Role in each watched namespace
 * when the operator is limited to some namespaces. `leaderElectionNamespace`: a Role in the
 * namespace the operator runs in.
 */
export const SCOPES = ['cluster', 'leaderElectionNamespace'] as const;
export type Scope = (typeof SCOPES)[number];

export interface PermissionRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly scope: Scope;
  /** The call that needs the rule, so an unused rule can be found and removed. */
  readonly why: string;
}

const EVENTS = { apiGroups: ['events.k8s.io'], resources: ['events'] } as const;

export const permissions: Readonly<Record<Component, readonly PermissionRule[]>> = {
  watcher: [
    {
      apiGroups: [GROUP],
      resources: [PLURAL],
      verbs: ['list', 'watch'],
      scope: 'cluster',
      why: 'the BackupJob informer lists and watches every BackupJob to enqueue its key',
    },
    {
      apiGroups: ['batch'],
      resources: ['cronjobs', 'jobs'],
      verbs: ['list', 'watch'],
      scope: 'cluster',
      why: 'informers on the owned CronJobs and the Jobs they start (label-selected) map child events to the owner key',
    },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'create', 'update'],
      scope: 'leaderElectionNamespace',
      why: 'leader election: only the Lease holder watches and enqueues',
    },
    {
      ...EVENTS,
      verbs: ['create'],
      scope: 'leaderElectionNamespace',
      why: 'leader election records who became leader as an Event on the Lease',
    },
  ],
  worker: [
    {
      apiGroups: [GROUP],
      resources: [PLURAL],
      verbs: ['get', 'patch'],
      scope: 'cluster',
      why: 'the reconciler adds or removes the finalizer, and reads the BackupJob when its snapshot cannot settle a run (a CronJob of the name that is not the operator’s)',
    },
    {
      apiGroups: [GROUP],
      resources: [`${PLURAL}/status`],
      verbs: ['patch'],
      scope: 'cluster',
      why: 'the reconciler writes conditions, lastBackupTime and observedGeneration',
    },
    {
      apiGroups: [GROUP],
      resources: [`${PLURAL}/finalizers`],
      verbs: ['update'],
      scope: 'cluster',
      why: 'children get a blocking controller ownerReference, which OwnerReferencesPermissionEnforcement allows only with this',
    },
    {
      apiGroups: ['batch'],
      resources: ['cronjobs'],
      verbs: ['get', 'create', 'patch', 'delete'],
      scope: 'cluster',
      why: 'the reconciler creates the desired CronJob, patches the fields it owns, deletes it before a cleanup, and reads one of the name that is not the operator’s',
    },
    {
      apiGroups: ['batch'],
      resources: ['jobs'],
      verbs: ['list', 'create', 'delete'],
      scope: 'cluster',
      why: 'the reconciler creates and retires the finalizer cleanup Jobs, and lists the backup runs when it reads from the API server',
    },
    {
      ...EVENTS,
      verbs: ['create', 'patch'],
      scope: 'cluster',
      why: 'every decision is recorded as an Event on the BackupJob',
    },
  ],
};
