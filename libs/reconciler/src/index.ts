// The BackupJob reconciler as a pure function: from the BackupJob and its children as last seen
// to the writes that converge them and when to look again. controller-runtime's Reconcile, with
// the client calls lifted out as actions so every decision is testable without an API server.
export * from './actions.js';
export * from './conditions.js';
export * from './config.js';
export * from './desired.js';
export * from './failure.js';
export * from './images.js';
export * from './jobs.js';
export * from './names.js';
export * from './owned.js';
export * from './ownership.js';
export * from './permitted.js';
export * from './reconcile.js';
export * from './references.js';
export * from './result.js';
export * from './schedule.js';
export * from './semantic.js';
export * from './shape.js';
export * from './spec.js';
export * from './state.js';
export * from './validate.js';
export * from './world.js';
