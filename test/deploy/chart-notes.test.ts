import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NAMESPACE, renderNotes } from './support/helm.js';

describe('NOTES.txt tells the user what to run next', () => {
  test('defaults: wait for the rollout, create a BackupJob, look at it, scale, metrics, CRD upgrades', () => {
    const notes = renderNotes();
    for (const line of [
      `kubectl rollout status deploy/backup-operator-watcher -n ${NAMESPACE}`,
      `kubectl rollout status deploy/backup-operator-worker -n ${NAMESPACE}`,
      'kubectl apply -n default -f - <<',
      'kind: BackupJob',
      'kubectl get backupjob -A',
      'kubectl describe backupjob mysql-daily -n default',
      `kubectl scale deploy/backup-operator-worker --replicas=8 -n ${NAMESPACE}`,
      `kubectl port-forward -n ${NAMESPACE} svc/backup-operator-worker-metrics 8080`,
      `TOKEN=$(kubectl create token backup-operator-prometheus -n ${NAMESPACE})`,
      'curl -sk -H "Authorization: Bearer $TOKEN" https://localhost:8080/metrics',
      'kubectl apply --server-side --force-conflicts -f <chart>/crds/',
    ]) {
      assert.ok(notes.includes(line), `missing: ${line}\n${notes}`);
    }
    assert.match(notes, /WARNING: the queue is held by the Redis inside this release/);
  });

  test('follows the values: watched namespaces, autoscaling, external Redis', () => {
    const notes = renderNotes([
      'watchNamespaces={ops,databases}',
      'worker.autoscaling.enabled=true',
      'redis.internal.enabled=false',
      'redis.url=redis://redis:6379',
    ]);
    assert.match(notes, /in one of the watched namespaces \(ops, databases\)/);
    assert.match(notes, /kubectl describe backupjob mysql-daily -n ops/);
    assert.match(notes, /the HorizontalPodAutoscaler owns the replica count now/);
    assert.doesNotMatch(notes, /WARNING/);
  });
});
