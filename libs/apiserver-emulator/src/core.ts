import { installAdmissionPolicies } from './admission/policies.js';
import { Authenticator, ADMIN } from './authn.js';
import { installBuiltinValidation } from './builtin-validation.js';
import { builtinResources } from './builtins.js';
import { EmulatorClock, type ClockMode } from './clock.js';
import { installCrdRegistrar } from './crd/registrar.js';
import { Discovery } from './discovery.js';
import { Faults } from './faults.js';
import { WatchHub } from './http/watch-hub.js';
import { ObjectService } from './objects.js';
import { RbacAuthorizer } from './rbac.js';
import { Registry } from './registry.js';
import { RequestLog } from './request-log.js';
import { Store } from './store.js';
import type { UserInfo } from './types.js';

export interface CoreOptions {
  /** Enforce RBAC on every request (off by default; reviews answer from RBAC either way). */
  rbac?: boolean;
  /** Identity of requests without credentials (kubectl sends none over http). Default: admin in system:masters. */
  anonymousUser?: UserInfo;
  /** Extra static bearer tokens. */
  staticTokens?: Record<string, UserInfo>;
  /** Watch history per resource; older resourceVersions get 410 Expired. Default 10000. */
  watchCacheSize?: number;
  /** Period of BOOKMARK events on watches that allow them. Default 60000 ms. */
  bookmarkIntervalMs?: number;
  /** A watch whose client stops reading is closed once this much output waits. Default 64 MiB. */
  watchBufferLimitBytes?: number;
  /** Request records kept for `log.entries()` (counters are exact regardless). Default 10000. */
  requestLogSize?: number;
  clock?: ClockMode;
  /** Adds foregroundDeletion/orphan finalizers on delete; set false when no garbage collector runs. */
  garbageCollection?: boolean;
  /** Namespaces that exist from the start besides default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** Reported by /version; kubectl's version dispatcher reads it. */
  serverVersion?: string;
}

/** Everything except the HTTP listener: state, semantics, identity, faults and logs. */
export class EmulatorCore {
  readonly registry = new Registry();
  readonly store: Store;
  readonly clock: EmulatorClock;
  readonly svc: ObjectService;
  readonly discovery: Discovery;
  readonly watches = new WatchHub();
  readonly log: RequestLog;
  readonly faults = new Faults();
  readonly authn: Authenticator;
  readonly authz: RbacAuthorizer;
  rbacEnabled: boolean;
  readonly bookmarkIntervalMs: number;
  readonly watchBufferLimitBytes: number;
  readonly serverVersion: string;
  serverAddress = '127.0.0.1:0';

  constructor(opts: CoreOptions = {}) {
    this.store = new Store(opts.watchCacheSize ?? 10000);
    this.clock = new EmulatorClock(opts.clock);
    for (const rt of builtinResources()) this.registry.add(rt, Number.MAX_SAFE_INTEGER);
    this.svc = new ObjectService(this.registry, this.store, this.clock, {
      garbageCollection: opts.garbageCollection ?? true,
    });
    installCrdRegistrar(this.svc);
    installBuiltinValidation(this.svc);
    this.discovery = new Discovery(this.registry, () => this.serverAddress);
    this.log = new RequestLog(opts.requestLogSize ?? 10000);
    this.authn = new Authenticator(this.store, opts.anonymousUser ?? ADMIN);
    for (const [token, user] of Object.entries(opts.staticTokens ?? {}))
      this.authn.addStaticToken(token, user);
    this.authz = new RbacAuthorizer(this.store);
    installAdmissionPolicies(this.registry, this.svc, this.authz);
    this.rbacEnabled = opts.rbac ?? false;
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60000;
    this.watchBufferLimitBytes = opts.watchBufferLimitBytes ?? 64 * 1024 * 1024;
    this.serverVersion = opts.serverVersion ?? 'v1.32.0';
    this.seed(opts.namespaces ?? []);
  }

  /** What a fresh cluster has: the system namespaces and cluster-admin bound to system:masters. */
  private seed(namespaces: string[]): void {
    const ns = this.registry.get('', 'v1', 'namespaces')!;
    for (const name of [
      'default',
      'kube-system',
      'kube-public',
      'kube-node-lease',
      ...namespaces,
    ]) {
      if (!this.svc.find(ns, '', name))
        this.svc.create(ns, '', { metadata: { name } }, { fieldManager: 'emulator' });
    }
    const rbac = (plural: string) => this.registry.get('rbac.authorization.k8s.io', 'v1', plural)!;
    const metadata = {
      name: 'cluster-admin',
      labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
    };
    const rules = [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ];
    this.svc.create(rbac('clusterroles'), '', { metadata, rules }, { fieldManager: 'emulator' });
    const roleRef = {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'cluster-admin',
    };
    const subjects = [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' },
    ];
    this.svc.create(
      rbac('clusterrolebindings'),
      '',
      { metadata: { ...metadata }, roleRef, subjects },
      { fieldManager: 'emulator' },
    );
  }
}
