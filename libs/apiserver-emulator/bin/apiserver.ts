#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { start, type KubeObject } from '../src/index.js';

const USAGE = `usage: npm run apiserver -- [options]

Serves the Kubernetes API emulator until SIGINT/SIGTERM and writes an admin kubeconfig for it.
Runtime control (faults, watches, clock, Jobs): the /__emulator/ endpoints, see
docs/apiserver-emulator.md.

  --port N                    port to listen on (default 6443; 0 picks a free one)
  --host ADDRESS              address to listen on (default 127.0.0.1; 0.0.0.0 for a container)
  --kubeconfig PATH           where the kubeconfig is written (default ./emu.kubeconfig)
  --advertise-url URL         server address written into the kubeconfig instead of the listening
                              one, e.g. the port a container publishes on the host
  --tls                       serve HTTPS with a self-signed certificate
  --rbac                      enforce RBAC on every request
  --clock MODE                real (default), manual or accelerated:<factor>
  --controllers LIST          of gc,namespace,deployments,jobs,cronjobs (default all five)
  --job-outcome OUTCOME       succeed (default), fail or manual: how Jobs finish
  --namespace NAME            a namespace that exists from the start (repeatable)
  --apply FILE                create the objects of this YAML file at start, e.g. a CRD
                              (repeatable)
  --watch-cache-size N        watch history per resource (default 10000)
  --latency SPEC              verb=list,resource=pods,ms=50,jitter=20 (repeatable)
  --error SPEC                code=503,rate=0.1,count=5,verb=get,resource=configmaps,retryAfter=2
                              (repeatable)
  -h, --help                  this text`;

function options() {
  return parseArgs({
    options: {
      port: { type: 'string', default: '6443' },
      host: { type: 'string', default: '127.0.0.1' },
      kubeconfig: { type: 'string', default: './emu.kubeconfig' },
      'advertise-url': { type: 'string' },
      tls: { type: 'boolean', default: false },
      rbac: { type: 'boolean', default: false },
      clock: { type: 'string' },
      latency: { type: 'string', multiple: true },
      error: { type: 'string', multiple: true },
      'watch-cache-size': { type: 'string' },
      controllers: { type: 'string' },
      'job-outcome': { type: 'string' },
      namespace: { type: 'string', multiple: true },
      apply: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
}

function fields(spec: string, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec.split(',')) {
    const [k, v] = part.split('=');
    if (!k || v === undefined)
      throw new Error(`--${flag}: expected key=value pairs separated by commas, got "${spec}"`);
    out[k.trim()] = v.trim();
  }
  return out;
}

function num(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${flag}: "${v}" is not a number`);
  return n;
}

function clockOption(spec: string | undefined) {
  if (!spec || spec === 'real') return { mode: 'real' as const };
  if (spec === 'manual') return { mode: 'manual' as const };
  const m = /^accelerated:(\d+(\.\d+)?)$/.exec(spec);
  if (!m) throw new Error(`--clock: expected real, manual or accelerated:<factor>, got "${spec}"`);
  return { mode: 'accelerated' as const, factor: Number(m[1]) };
}

async function main(): Promise<void> {
  let values: ReturnType<typeof options>;
  try {
    values = options();
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = num(values.port, 'port') ?? 6443;
  const controllers = new Set(
    (values.controllers ?? 'gc,namespace,deployments,jobs,cronjobs')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const outcome = values['job-outcome'] ?? 'succeed';
  if (!['succeed', 'fail', 'manual'].includes(outcome))
    throw new Error(`--job-outcome: expected succeed, fail or manual, got "${outcome}"`);
  const emu = await start({
    port,
    host: values.host,
    tls: values.tls,
    rbac: values.rbac,
    advertiseUrl: values['advertise-url'],
    control: true,
    clock: clockOption(values.clock),
    watchCacheSize: num(values['watch-cache-size'], 'watch-cache-size'),
    namespaces: values.namespace,
    controllers: {
      garbageCollector: controllers.has('gc'),
      namespaceLifecycle: controllers.has('namespace'),
      deployments: controllers.has('deployments'),
      jobs: controllers.has('jobs') ? { outcome: outcome as 'succeed' | 'fail' | 'manual' } : false,
      cronJobs: controllers.has('cronjobs'),
    },
  });
  for (const spec of values.latency ?? []) {
    const f = fields(spec, 'latency');
    emu.core.faults.addLatency({
      match: f.verb
        ? { verb: f.verb, resource: f.resource }
        : f.resource
          ? { resource: f.resource }
          : undefined,
      fixedMs: num(f.ms, 'latency') ?? 0,
      jitterMs: num(f.jitter, 'latency'),
    });
  }
  for (const spec of values.error ?? []) {
    const f = fields(spec, 'error');
    const code = num(f.code, 'error');
    if (code === undefined) throw new Error('--error: code=<status> is required');
    emu.core.faults.addError({
      match: { verb: f.verb, resource: f.resource },
      code,
      rate: num(f.rate, 'error'),
      count: num(f.count, 'error'),
      retryAfterSeconds: num(f.retryAfter, 'error'),
    });
  }
  for (const file of values.apply ?? [])
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const obj = doc.toJS() as KubeObject | null;
      if (obj) emu.objects.create(obj);
    }
  // Written last: once the file is there, the emulator serves and holds what --apply named.
  writeFileSync(values.kubeconfig, emu.kubeconfig);
  console.log(
    `apiserver emulator serving ${emu.url} (listening on ${values.host}:${emu.port}); kubeconfig written to ${values.kubeconfig}`,
  );
  const shutdown = () => {
    void emu.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
