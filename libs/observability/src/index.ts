// JSON logs and a private Prometheus registry per process, with the metric names the Kubernetes
// ecosystem already alerts on: controller-runtime's reconcile and workqueue metrics, client-go's
// rest_client_*. Imports no other library here, so every one of them can log and count.
export * from './logger.js';
export { NestJsonLogger } from './nest-logger.js';
export * from './metrics.js';
export * from './state-metrics.js';
export { instrumentKubeConfig } from './rest-client-metrics.js';
export { serveMetrics, closeServer, listenOn } from './metrics-server.js';
export { MetricsAuthorizer } from './metrics-auth.js';
