/**
 * Emulator benchmark (not a test): N BackupJobs created, read, listed and watched by W watchers.
 * The emulator runs in its own process (the CLI), so the numbers are its own, not the client's.
 * With --cronjobs M, M CronJobs that are not due exist first and the CronJob controller runs: what
 * it costs while idle, and whether the creates slow down.
 *
 *   node dist/libs/apiserver-emulator/bench/apiserver.js [--objects 10000] [--watchers 10] [--concurrency 32] [--cronjobs 0]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '#testing';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    watchers: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
    cronjobs: { type: 'string', default: '0' },
  },
});
const N = Number(values.objects);
const W = Number(values.watchers);
const C = Number(values.concurrency);
const CRONJOBS = Number(values.cronjobs);
const agent = new Agent({ keepAlive: true, maxSockets: C });

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'backupjobs.ops.example.com' },
  spec: {
    group: 'ops.example.com',
    scope: 'Namespaced',
    names: { plural: 'backupjobs', singular: 'backupjob', kind: 'BackupJob', shortNames: ['bj'] },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
};

function call(
  port: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (payload) headers['Content-Length'] = String(Buffer.byteLength(payload));
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function pool(count: number, work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** CPU seconds (user + system) the process has used: robust to other load on the machine. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** A raw watch stream recording delivery latency from the timestamp each object carries. */
function watcher(port: number, latencies: number[], received: { n: number }): () => void {
  const req = request(
    {
      host: '127.0.0.1',
      port,
      path: '/apis/ops.example.com/v1alpha1/backupjobs?watch=true&resourceVersion=1',
      agent: false,
    },
    (res) => {
      let buf = '';
      res.on('data', (c: Buffer) => {
        const now = performance.timeOrigin + performance.now();
        buf += c.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const ev = JSON.parse(buf.slice(0, nl)) as {
            type: string;
            object: { spec?: { sentAt?: number } };
          };
          buf = buf.slice(nl + 1);
          if (ev.type === 'ADDED' && ev.object.spec?.sentAt) {
            latencies.push(now - ev.object.spec.sentAt);
            received.n++;
          }
        }
      });
    },
  );
  req.end();
  return () => req.destroy();
}

async function main(): Promise<void> {
  const port = await freePort();
  const bin = new URL('../bin/apiserver.js', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [
      bin,
      '--port',
      String(port),
      '--kubeconfig',
      join(tmpdir(), `bench-${port}.kubeconfig`),
      '--controllers',
      CRONJOBS > 0 ? 'cronjobs' : '',
      '--watch-cache-size',
      String(N + 100),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  try {
    await call(port, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD);
    const namespaces = 10;
    for (let i = 0; i < namespaces; i++)
      await call(port, 'POST', '/api/v1/namespaces', { metadata: { name: `ns-${i}` } });
    await pool(CRONJOBS, async (i) => {
      const r = await call(
        port,
        'POST',
        `/apis/batch/v1/namespaces/ns-${i % namespaces}/cronjobs`,
        {
          metadata: { name: `cj-${i}` },
          spec: {
            schedule: '0 0 1 1 *',
            jobTemplate: {
              spec: {
                template: {
                  spec: { restartPolicy: 'Never', containers: [{ name: 'b', image: 'b:1' }] },
                },
              },
            },
          },
        },
      );
      if (r.status !== 201) throw new Error(`create CronJob ${i}: ${r.status} ${r.text}`);
    });
    // The emulator alone, with nothing asked of it: its controllers' own work.
    const idle0 = cpuSeconds(child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    const idleCores = (cpuSeconds(child.pid!) - idle0) / 2;
    const rssStart = rssMb(child.pid!);
    const latencies: number[] = [];
    const received = { n: 0 };
    const stops = Array.from({ length: W }, () => watcher(port, latencies, received));
    await new Promise((r) => setTimeout(r, 200));

    const path = (i: number) =>
      `/apis/ops.example.com/v1alpha1/namespaces/ns-${i % namespaces}/backupjobs`;
    const cpu0 = cpuSeconds(child.pid!);
    const createSecs = await pool(N, async (i) => {
      const r = await call(port, 'POST', path(i), {
        apiVersion: 'ops.example.com/v1alpha1',
        kind: 'BackupJob',
        metadata: { name: `bj-${i}` },
        spec: {
          target: 'mysql',
          schedule: '@daily',
          sentAt: performance.timeOrigin + performance.now(),
        },
      });
      if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text}`);
    });
    const deadline = Date.now() + 60000;
    while (received.n < N * W && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const cpu1 = cpuSeconds(child.pid!);
    const getSecs = await pool(N, async (i) => {
      const r = await call(port, 'GET', `${path(i)}/bj-${i}`);
      if (r.status !== 200) throw new Error(`get ${i}: ${r.status}`);
    });
    const cpu2 = cpuSeconds(child.pid!);
    const lists = 20;
    const listStart = performance.now();
    for (let i = 0; i < lists; i++)
      await call(port, 'GET', '/apis/ops.example.com/v1alpha1/backupjobs');
    const listMs = (performance.now() - listStart) / lists;
    const pageStart = performance.now();
    let cont = '';
    let pages = 0;
    do {
      const r = await call(
        port,
        'GET',
        `/apis/ops.example.com/v1alpha1/backupjobs?limit=500${cont ? `&continue=${cont}` : ''}`,
      );
      cont = (JSON.parse(r.text) as { metadata: { continue?: string } }).metadata.continue ?? '';
      pages++;
    } while (cont);
    const pagedMs = performance.now() - pageStart;
    const sorted = latencies.sort((a, b) => a - b);
    for (const stop of stops) stop();
    const result = {
      objects: N,
      watchers: W,
      concurrency: C,
      cronJobs: CRONJOBS,
      idleEmulatorCores: Number(idleCores.toFixed(2)),
      createPerSecond: Math.round(N / createSecs),
      createPerEmulatorCpuSecond: Math.round(N / Math.max(0.01, cpu1 - cpu0)),
      getPerSecond: Math.round(N / getSecs),
      getPerEmulatorCpuSecond: Math.round(N / Math.max(0.01, cpu2 - cpu1)),
      loadAverage1m: loadavg()[0],
      fullListMs: Math.round(listMs),
      pagedListMs: Math.round(pagedMs),
      pages,
      watchEventsDelivered: received.n,
      watchLatencyMsP50: Number(percentile(sorted, 50).toFixed(2)),
      watchLatencyMsP99: Number(percentile(sorted, 99).toFixed(2)),
      rssMbAtStart: rssStart,
      rssMbAtEnd: rssMb(child.pid!),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    child.kill('SIGTERM');
    agent.destroy();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
