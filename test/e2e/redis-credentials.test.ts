import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { selfSignedCertificate } from '#apiserver-emulator';
import {
  eventually,
  type OperatorSystem,
  REDIS_MODES,
  type RedisDeployment,
  startOperatorSystem,
  startRedisDeployment,
} from '#testing';
import { backupJobManifest, isConverged } from './support.js';

// The queue's Redis as production should run it, in each of its modes: TLS (rediss:// for one
// server, REDIS_TLS for a Cluster or Sentinel; the servers' certificate trusted through
// NODE_EXTRA_CA_CERTS as the chart's redis.tls.caSecret does) and passwords that come from the
// environment (the chart fills them from a Secret), never from a command line or a log. The
// Sentinels have a password of their own.

const PASSWORD = 'correct-horse-battery-staple';
const SENTINEL_PASSWORD = 'sentinel-horse-battery-staple';
const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
const certFile = join(dir, 'tls.crt');
const keyFile = join(dir, 'tls.key');

before(() => {
  const tls = selfSignedCertificate();
  writeFileSync(certFile, tls.cert);
  writeFileSync(keyFile, tls.key);
});
after(() => rmSync(dir, { recursive: true, force: true }));

for (const mode of REDIS_MODES) {
  describe(`Redis (${mode}) with TLS and passwords`, { timeout: 240_000 }, () => {
    let redis: RedisDeployment;
    let sys: OperatorSystem;
    const sentinel = mode === 'sentinel';
    before(async () => {
      redis = await startRedisDeployment(mode, {
        password: PASSWORD,
        tls: { certFile, keyFile },
        ...(sentinel && { sentinelPassword: SENTINEL_PASSWORD }),
      });
      sys = await startOperatorSystem({
        redisDeployment: redis,
        watchers: 1,
        workers: 1,
        env: {
          REDIS_PASSWORD: PASSWORD,
          NODE_EXTRA_CA_CERTS: certFile,
          ...(sentinel && { REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD }),
        },
        emulator: { namespaces: ['ops'] },
      });
    });
    after(async () => {
      await sys?.stop();
      await redis?.stop();
    });

    test('keys flow through a Redis that needs TLS and a password', async () => {
      assert.ok(
        redis.env.REDIS_URL?.startsWith('rediss://') || redis.env.REDIS_TLS === 'true',
        JSON.stringify(redis.env),
      );
      sys.emulator.objects.create(backupJobManifest('ops', 'app'));
      await eventually('app to converge', () => isConverged(sys, 'ops', 'app'), 60_000);
    });

    test('the passwords are on no command line and in no log line', () => {
      for (const proc of [...sys.watchers, ...sys.workers]) {
        const cmdline = readFileSync(`/proc/${proc.child.pid}/cmdline`, 'utf8');
        for (const secret of [PASSWORD, SENTINEL_PASSWORD]) {
          assert.ok(!cmdline.includes(secret), `${proc.name} command line`);
          const leaked = proc.lines.filter((line) => line.includes(secret));
          assert.deepEqual(leaked, [], `${proc.name} logged a password`);
        }
        assert.ok(
          proc.lines.some((line) => line.includes('"redis.password":"(set)"')),
          `${proc.name} says a password is set`,
        );
        if (sentinel) {
          assert.ok(proc.lines.some((line) => line.includes('"redis.sentinelPassword":"(set)"')));
        }
      }
    });
  });
}
