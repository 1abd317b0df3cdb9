export { start, Emulator, type StartOptions } from './emulator.js';
export { EmulatorCore, type CoreOptions } from './core.js';
export { ObjectClient } from './client.js';
export { ADMIN, ADMIN_TOKEN } from './authn.js';
export type { ErrorFault, LatencyFault, FaultMatch } from './faults.js';
export type { WatchMatch } from './http/watch-hub.js';
export type { RequestRecord, RequestFilter } from './request-log.js';
export type { ClockMode } from './clock.js';
export type { KubeObject, UserInfo } from './types.js';
