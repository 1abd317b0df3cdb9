export * from './logger.js';
export { NestJsonLogger } from './nest-logger.js';
export * from './metrics.js';
export * from './state-metrics.js';
export { instrumentKubeConfig } from './rest-client-metrics.js';
export { serveMetrics, closeServer, listenOn } from './metrics-server.js';
export { MetricsAuthorizer } from './metrics-auth.js';
