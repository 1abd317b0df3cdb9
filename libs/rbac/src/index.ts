// The Kubernetes calls each process makes, as RBAC rules, and the config/rbac and chart Roles
// generated from them. Kubebuilder's +kubebuilder:rbac markers and controller-gen's role.yaml,
// kept as data so each rule says which call needs it.
export * from './permissions.js';
export * from './render.js';
