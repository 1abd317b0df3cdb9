// An in-memory Kubernetes API server that the real kubectl, client-node and the Python client
// talk to, with admission, RBAC, watches, Job and CronJob controllers and injectable faults. It
// plays the part envtest's kube-apiserver and etcd play for controller-runtime, without either
// binary, so tests and benchmarks can start one per case.
export { start, Emulator, type StartOptions } from './emulator.js';
export { selfSignedCertificate } from './tls.js';
export { ScheduleAccelerator } from './controllers/schedule-accelerator.js';
export type { ErrorFault, FaultMatch } from './faults.js';
export type { RequestRecord, RequestFilter } from './request-log.js';
export type { KubeObject } from './types.js';
