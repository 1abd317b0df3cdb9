/**
 * The libraries by layer, bottom first; the apps stand on top of them all. docs/architecture.md
 * ("Libraries and their layers") draws the same table and states the same rules:
 *
 * - Code that ships (apps, and libraries outside their test/ and bench/ folders) imports libraries
 *   of its own layer or below. Within a layer, the libraries form no circle: watch names CronJobs
 *   as the reconciler does and writes snapshots through snapshot's interface, and neither is
 *   imported back.
 * - Test support stands beside the layers: it may import any library, and only tests and benches
 *   import it (test/, bench/, tools/, and every library's own test/ and bench/ folders).
 * - A library's tests and benches import by the same layers as the library, plus test support.
 * - test/, bench/ and tools/ may import anything; nothing else imports them.
 * - A self-contained library imports no other library of the project, so every one can use it
 *   (observability) or it stays a general Kubernetes client that knows no BackupJob (kube).
 */
export interface Layering {
  readonly layers: readonly { readonly name: string; readonly libraries: readonly string[] }[];
  readonly testSupport: readonly string[];
  readonly selfContained: readonly string[];
}

export const HOUSE: Layering = {
  layers: [
    { name: 'foundation', libraries: ['api', 'config', 'observability', 'kube'] },
    { name: 'domain', libraries: ['watch', 'queue', 'reconciler', 'snapshot', 'rbac'] },
    { name: 'composition', libraries: ['controller', 'runtime'] },
  ],
  testSupport: ['apiserver-emulator', 'testing'],
  selfContained: ['observability', 'kube'],
};
