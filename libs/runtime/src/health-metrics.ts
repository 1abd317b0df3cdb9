import { gaugeFamiliesText, type MetricsTextSource } from '#observability';
import { runHealthCheck, type HealthRegistry } from './health.js';

/**
 * `backupjob_operator_readiness_check_up{check}`: each readiness check (redis, apiserver, watcher,
 * shutdown …) run at scrape time, 1 when it passes. What /readyz answers, split by check, so an
 * alert can say which dependency failed (Redis down, a leader not synced) rather than only that
 * a pod is not ready.
 */
export function readinessCheckMetrics(health: HealthRegistry): MetricsTextSource {
  return async () => {
    const checks = health.checks('readiness');
    const results = await Promise.all(checks.map(async (c) => (await runHealthCheck(c)).up));
    return gaugeFamiliesText([
      {
        name: 'backupjob_operator_readiness_check_up',
        help: 'Whether a readiness check passes at scrape time (1) or fails or times out (0).',
        samples: checks.map((c, i) => ({ labels: { check: c.name }, value: results[i] ? 1 : 0 })),
      },
    ]);
  };
}
