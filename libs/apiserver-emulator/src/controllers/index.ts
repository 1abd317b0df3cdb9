import type { EmulatorCore } from '../core.js';
import { GarbageCollector } from './garbage-collector.js';
import { NamespaceLifecycle } from './namespace-lifecycle.js';

export interface ControllerOptions {
  /** ownerReference garbage collection. Default true. */
  garbageCollector?: boolean;
  /** Terminating namespaces lose their content, then go away. Default true. */
  namespaceLifecycle?: boolean;
}

export interface Controllers {
  stop(): void;
}

export function startControllers(core: EmulatorCore, opts: ControllerOptions = {}): Controllers {
  const running: { stop(): void }[] = [];
  if (opts.garbageCollector ?? true) running.push(new GarbageCollector(core.svc));
  if (opts.namespaceLifecycle ?? true) running.push(new NamespaceLifecycle(core.svc));
  return {
    stop: () => {
      for (const c of running) c.stop();
    },
  };
}
