import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { selfSignedCertificate } from '#apiserver-emulator';
import {
  startOperatorSystem,
  type OperatorSystem,
  startRedisServer,
  type RedisServer,
} from '#testing';
import { backupJobManifest, eventually, isConverged } from './support.js';

// The queue's Redis as production should run it: TLS (rediss://, the server's certificate trusted
// through NODE_EXTRA_CA_CERTS as the chart's redis.tls.caSecret does) and a password that comes
// from the environment (the chart fills it from a Secret), never from a command line or a log.

const PASSWORD = 'correct-horse-battery-staple';
const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
let redis: RedisServer;
let sys: OperatorSystem;

before(async () => {
  const tls = selfSignedCertificate();
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, tls.cert);
  writeFileSync(keyFile, tls.key);
  redis = await startRedisServer([], { password: PASSWORD, tls: { certFile, keyFile } });
  sys = await startOperatorSystem({
    redisUrl: redis.url,
    watchers: 1,
    workers: 1,
    env: { REDIS_PASSWORD: PASSWORD, NODE_EXTRA_CA_CERTS: certFile },
    emulator: { namespaces: ['ops'] },
  });
});

after(async () => {
  await sys?.stop();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('keys flow through a rediss:// Redis that needs a password', async () => {
  assert.match(redis.url, /^rediss:\/\//);
  sys.emulator.objects.create(backupJobManifest('ops', 'app'));
  await eventually('app to converge', () => isConverged(sys, 'ops', 'app'), 60_000);
});

test('the password is on no command line and in no log line', () => {
  for (const proc of [...sys.watchers, ...sys.workers]) {
    const cmdline = readFileSync(`/proc/${proc.child.pid}/cmdline`, 'utf8');
    assert.ok(!cmdline.includes(PASSWORD), `${proc.name} command line`);
    const leaked = proc.lines.filter((line) => line.includes(PASSWORD));
    assert.deepEqual(leaked, [], `${proc.name} logged the password`);
    assert.ok(
      proc.lines.some((line) => line.includes('"redis.password":"(set)"')),
      `${proc.name} says a password is set`,
    );
  }
});
