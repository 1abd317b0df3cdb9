import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start, type Emulator, type StartOptions } from '../src/index.js';

export const CRD_FILE = 'config/crd/bases/ops.example.com_backupjobs.yaml';
export const SAMPLE_FILE = 'config/samples/ops_v1alpha1_backupjob.yaml';

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Plain HTTP calls against an emulator, for asserting wire-level behaviour. */
export function http(emu: Emulator) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpResult> => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
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

export async function eventually<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 10000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
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
