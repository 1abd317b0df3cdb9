export { start, Emulator, type StartOptions } from './emulator.js';
export { selfSignedCertificate } from './tls.js';
export { ScheduleAccelerator } from './controllers/schedule-accelerator.js';
export type { ErrorFault, FaultMatch } from './faults.js';
export type { RequestRecord, RequestFilter } from './request-log.js';
export type { KubeObject } from './types.js';
