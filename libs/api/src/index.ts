// The BackupJob API: its names, its schema and the TypeScript types and CRD generated from that
// one schema. Kubebuilder's api/v1alpha1 package with controller-gen's CRD output: the one
// contract between the operator, the chart and the manifests users write.
export * from './names.js';
export * from './json-schema.js';
export * from './schema.js';
export * from './crd.js';
export type * from './generated/backupjob.js';
