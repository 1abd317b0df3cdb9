import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start, type Emulator, type StartOptions } from '../src/index.js';

/**
 * Every kubectl CI has: the one on PATH (1.32), the versioned binaries the Google Cloud CLI package
 * installs beside it, and Debian's 1.20 unpacked into .tools/kubernetes-client (see
 * docs/apiserver-emulator.md).
 */
const GCLOUD_BIN = '/usr/lib/google-cloud-sdk/bin';
const KUBECTL_120 = join(process.cwd(), '.tools/kubernetes-client/usr/bin/kubectl');
export const KUBECTL_VERSIONS: { label: string; bin: string; minor: number }[] = [
  { label: 'kubectl on PATH (1.32)', bin: 'kubectl', minor: 32 },
  ...[27, 28, 29, 30, 31, 33].map((minor) => ({
    label: `kubectl 1.${minor}`,
    bin: join(GCLOUD_BIN, `kubectl.1.${minor}`),
    minor,
  })),
  { label: 'kubectl 1.20 (Debian kubernetes-client)', bin: KUBECTL_120, minor: 20 },
];

/** Why a kubectl binary cannot be run here, or undefined when it is installed. */
export function kubectlSkip(bin: string): string | undefined {
  if (bin === 'kubectl' || existsSync(bin)) return undefined;
  const hint =
    bin === KUBECTL_120 ? ' (libs/apiserver-emulator/bin/install-kubectl-1.20.sh installs it)' : '';
  return `${bin} not installed${hint}`;
}

export const CRD_FILE = 'config/crd/bases/ops.example.com_backupjobs.yaml';
export const SAMPLE_FILE = 'config/samples/ops_v1alpha1_backupjob.yaml';

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Plain HTTP(S) calls against an emulator (self-signed certificates accepted), for wire-level assertions. */
export function http(emu: Emulator) {
  return (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const url = new URL(`${emu.url}${path}`);
      const payload =
        body === undefined || typeof body === 'string' || Buffer.isBuffer(body)
          ? body
          : JSON.stringify(body);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      // DELETE bodies need an explicit length: Node does not chunk them by default.
      if (payload !== undefined)
        headers = { ...headers, 'Content-Length': String(Buffer.byteLength(payload)) };
      const req = send(
        url,
        {
          method,
          headers: { 'Content-Type': 'application/json', ...headers },
          rejectUnauthorized: false,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              for (const x of Array.isArray(v) ? v : [v ?? '']) h.append(k, x);
            resolve({ status: res.statusCode ?? 0, headers: h, text, json });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** Reads a watch stream line by line until `until` says stop (or the deadline passes). */
export async function watchEvents(
  url: string,
  until: (
    events: {
      type: string;
      object: { metadata: { name?: string; resourceVersion?: string }; code?: number };
    }[],
  ) => boolean,
  timeoutMs = 5000,
  headers: Record<string, string> = {},
): Promise<
  {
    type: string;
    object: {
      metadata: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
      code?: number;
      reason?: string;
    };
  }[]
> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const events: { type: string; object: never }[] = [];
  try {
    const res = await fetch(url, { signal: controller.signal, headers });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      if (until(events)) break;
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    }
  } catch (e) {
    if ((e as Error).name !== 'AbortError') throw e;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl bound to one emulator, with its own kubeconfig and discovery cache. */
export function kubectl(emu: Emulator, bin = 'kubectl') {
  const dir = mkdtempSync(join(tmpdir(), 'emu-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, emu.kubeconfig);
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: join(dir, 'cache'),
    HOME: dir,
  };
  const run = (args: string[], timeoutMs = 60000): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(
        bin,
        args,
        { env, timeout: timeoutMs, cwd: process.cwd() },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
              ? (err as unknown as { code: number }).code
              : 1
            : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  return Object.assign(run, {
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    kubeconfig,
    dir,
  });
}

export async function withEmulator(opts: StartOptions = {}): Promise<Emulator> {
  return start({ port: 0, ...opts });
}

/** Protobuf wire encoding for hand-built request bodies: a field is [number, value]. */
export type ProtoField = [number, string | number | boolean | Buffer | ProtoField[]];

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

function protoMessage(fields: ProtoField[]): Buffer {
  return Buffer.concat(
    fields.map(([no, value]) => {
      if (typeof value === 'number' || typeof value === 'boolean')
        return Buffer.concat([varint(no * 8), varint(Number(value))]);
      const bytes =
        typeof value === 'string'
          ? Buffer.from(value)
          : Buffer.isBuffer(value)
            ? value
            : protoMessage(value);
      return Buffer.concat([varint(no * 8 + 2), varint(bytes.length), bytes]);
    }),
  );
}

/** A `k8s\0` envelope (runtime.Unknown) around an encoded object, as client-go sends it. */
export function protoEnvelope(apiVersion: string, kind: string, raw: ProtoField[]): Buffer {
  const unknown = protoMessage([
    [
      1,
      [
        [1, apiVersion],
        [2, kind],
      ],
    ],
    [2, protoMessage(raw)],
  ]);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}
