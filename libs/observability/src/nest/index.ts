export * from './tokens.js';
export { OperatorCoreModule, type CoreContext } from './core.module.js';
export { runOperatorApp, type OperatorApp } from './bootstrap.js';
export type { KubeConnection } from './kube.provider.js';
