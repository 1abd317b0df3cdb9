import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { helm, templateArgs } from './support/helm.js';

/** Renders with bad values and returns Helm's error output; fails when Helm accepts them. */
function rejected(sets: readonly string[]): string {
  const run = helm(templateArgs([], sets));
  assert.notEqual(run.status, 0, `helm accepted ${sets.join(' ')}`);
  return run.stderr;
}

describe('values.schema.json and the chart reject bad values with a message naming them', () => {
  test('a wrong type', () => {
    assert.match(
      rejected(['worker.replicas=two']),
      /worker\.replicas: Invalid type\. Expected: integer, given: string/,
    );
    assert.match(
      rejected(['watchNamespaces=ops']),
      /watchNamespaces: Invalid type\. Expected: array, given: string/,
    );
    assert.match(
      rejected(['rbac.create=yes']),
      /rbac\.create: Invalid type\. Expected: boolean, given: string/,
    );
  });

  test('an unknown key at the top and deep down (a typo is not silently ignored)', () => {
    assert.match(rejected(['replicas=3']), /\(root\): Additional property replicas is not allowed/);
    assert.match(
      rejected(['worker.replicaz=3']),
      /worker: Additional property replicaz is not allowed/,
    );
    assert.match(
      rejected(['redis.existingSecret.passwordkey=pw']),
      /redis\.existingSecret: Additional property passwordkey is not allowed/,
    );
  });

  test('out-of-range numbers, bad enums and patterns', () => {
    assert.match(
      rejected(['worker.concurrency=0']),
      /worker\.concurrency: Must be greater than or equal to 1/,
    );
    assert.match(
      rejected(['logLevel=verbose']),
      /logLevel: logLevel must be one of the following: "debug", "info", "warn", "error"/,
    );
    assert.match(
      rejected(['redis.internal.enabled=false', 'redis.url=http://redis:6379']),
      /redis\.url: Does not match pattern/,
    );
    assert.match(rejected(['watchNamespaces={Ops}']), /watchNamespaces\.0: Does not match pattern/);
    assert.match(rejected(['worker.shards=0-3;7']), /worker\.shards: Does not match pattern/);
  });

  test('a missing required value', () => {
    assert.match(rejected(['image.repository=null']), /image: repository is required/);
    assert.match(
      rejected(['redis.internal.enabled=false']),
      /redis: set redis\.url \(redis:\/\/host:6379\/0 or rediss:\/\/host:6380\/0 for TLS\), or redis\.existingSecret\.name, or redis\.internal\.enabled=true/,
    );
    assert.match(
      rejected(['worker.serviceAccount.create=false']),
      /worker\.serviceAccount\.name is required when worker\.serviceAccount\.create is false/,
    );
  });

  test('redis.mode: one of three, with the values each mode needs and none of the others', () => {
    const external = ['redis.internal.enabled=false'];
    assert.match(
      rejected([...external, 'redis.mode=replication']),
      /redis\.mode: redis\.mode must be one of the following: "standalone", "cluster", "sentinel"/,
    );
    assert.match(
      rejected([...external, 'redis.mode=cluster', 'redis.cluster.nodes={redis-0}']),
      /redis\.cluster\.nodes\.0: Does not match pattern/,
    );
    assert.match(
      rejected(['redis.mode=cluster', 'redis.cluster.nodes={a:6379}']),
      /redis\.mode=cluster needs a Redis of yours .*: set redis\.internal\.enabled=false/,
    );
    assert.match(
      rejected([...external, 'redis.mode=cluster']),
      /redis\.mode=cluster: set redis\.cluster\.nodes/,
    );
    assert.match(
      rejected([...external, 'redis.mode=sentinel', 'redis.sentinel.nodes={s:26379}']),
      /redis\.mode=sentinel: set redis\.sentinel\.nodes \(the Sentinels as host:port\) and redis\.sentinel\.masterName/,
    );
    assert.match(
      rejected([...external, 'redis.url=redis://r:6379', 'redis.cluster.nodes={a:6379}']),
      /redis\.cluster\.nodes is set but redis\.mode is standalone/,
    );
    assert.match(
      rejected([
        ...external,
        'redis.mode=cluster',
        'redis.cluster.nodes={a:6379}',
        'redis.url=redis://r:6379',
      ]),
      /redis\.url is for redis\.mode=standalone/,
    );
    assert.match(
      rejected([...external, 'redis.url=redis://r:6379', 'redis.tls.enabled=true']),
      /redis\.tls\.enabled is for redis\.mode cluster or sentinel/,
    );
  });

  test('combinations that contradict each other', () => {
    assert.match(
      rejected(['worker.autoscaling.enabled=true', 'worker.keda.enabled=true']),
      /worker\.autoscaling\.enabled and worker\.keda\.enabled are exclusive/,
    );
    assert.match(
      rejected(['redis.url=redis://x:6379']),
      /redis\.internal\.enabled=true runs a Redis inside the release/,
    );
    assert.match(
      rejected(['ports.metrics=9000', 'ports.health=9000']),
      /ports\.metrics and ports\.health must differ/,
    );
  });

  test('a Kubernetes older than the supported range', () => {
    const run = helm([...templateArgs(), '--kube-version', '1.26.9']);
    assert.notEqual(run.status, 0);
    assert.match(
      run.stderr,
      /chart requires kubeVersion: >=1\.27\.0-0 which is incompatible with Kubernetes v1\.26\.9/,
    );
    assert.equal(helm([...templateArgs(), '--kube-version', '1.27.0']).status, 0);
  });
});
