export * from './names.js';
export * from './json-schema.js';
export * from './schema.js';
export * from './crd.js';
export type * from './generated/backupjob.js';
