import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import {
  eventually,
  freePort,
  type ManagedProcess,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import { backupJobManifest, isConverged } from './support.js';

// The watcher and the workers move keys through BullMQ queues, one per shard; the watcher serves
// the read-only queue dashboard only when QUEUE_DASHBOARD_PORT is set, and otherwise listens on
// nothing but its metrics and health ports.

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    watchers: 0,
    workers: 1,
    emulator: { namespaces: ['ops'] },
  });
});

after(async () => {
  await sys?.stop();
});

/** TCP ports the process listens on, from its socket inodes and the kernel's socket tables. */
function listeningPorts(proc: ManagedProcess): Set<number> {
  const pid = proc.child.pid as number;
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // The descriptor closed while being listed.
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN; field 9 is the socket's inode.
      if (fields[3] === '0A' && inodes.has(fields[9] as string)) {
        ports.add(parseInt((fields[1] as string).split(':')[1] as string, 16));
      }
    }
  }
  return ports;
}

async function leading(proc: ManagedProcess): Promise<void> {
  await proc.waitForLine((l) => l.includes('"msg":"campaigning for leadership"'));
}

test('keys move through BullMQ shard queues; without QUEUE_DASHBOARD_PORT only metrics and health listen', async () => {
  const watcher = await sys.startWatcher();
  await leading(watcher);
  sys.emulator.objects.create(backupJobManifest('ops', 'mysql-daily'));
  await eventually('the BackupJob to converge', () => isConverged(sys, 'ops', 'mysql-daily'));

  const redis = new Redis(sys.redisUrl);
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: 'wq:{backupjob:*}:backupjob-*' })) {
      keys.push(...(batch as string[]));
    }
    assert.ok(
      keys.some((k) => /^wq:\{backupjob:\d+\}:backupjob-\d+:meta$/.test(k)),
      `BullMQ's keys under the shard prefixes: ${keys.join(' ')}`,
    );
  } finally {
    redis.disconnect();
  }

  const { metrics, health } = sys.portsOf(watcher);
  assert.deepEqual([...listeningPorts(watcher)].sort(), [metrics, health].sort());
  await watcher.stop('SIGTERM');
});

test('with QUEUE_DASHBOARD_PORT the watcher serves the read-only dashboard of every shard', async () => {
  const port = await freePort();
  const watcher = await sys.startWatcher({
    QUEUE_DASHBOARD_PORT: String(port),
    QUEUE_DASHBOARD_BIND_ADDRESS: '127.0.0.1',
  });
  await watcher.waitForLine((l) => l.includes('"msg":"serving the read-only queue dashboard"'));
  const { metrics, health } = sys.portsOf(watcher);
  const expected = [metrics, health, port].sort().join(',');
  await eventually('the probe server to listen too', () => {
    const ports = [...listeningPorts(watcher)].sort().join(',');
    return ports === expected ? ports : undefined;
  });

  const page = await fetch(`http://127.0.0.1:${port}/`);
  assert.equal(page.status, 200);
  const api = (await (await fetch(`http://127.0.0.1:${port}/api/queues`)).json()) as {
    queues: { name: string; readOnlyMode: boolean }[];
  };
  assert.deepEqual(api.queues.map((q) => q.name).sort(), [
    'backupjob-0',
    'backupjob-1',
    'backupjob-2',
    'backupjob-3',
  ]);
  assert.ok(api.queues.every((q) => q.readOnlyMode));
  const write = await fetch(`http://127.0.0.1:${port}/api/queues/backupjob-0/retry/failed`, {
    method: 'PUT',
  });
  assert.equal(write.status, 405);
  await watcher.stop('SIGTERM');
});
