export * from './api-error.js';
export * from './clients.js';
export * from './event-recorder.js';
export * from './executor.js';
export * from './reconcile-key.js';
export * from './grant-review.js';
export * from './instrumented.js';
export * from './key-guard.js';
