import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { profileFlags } from './system.js';
import type { HostRequest, HostResponse, OpName, Ops } from './emulator-protocol.js';

type Args<K extends OpName> = Parameters<Ops[K]>[0];
type Result<K extends OpName> = Awaited<ReturnType<Ops[K]>>;

/** The bench runner's side of the emulator host process. */
export class EmulatorHandle {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void }
  >();
  url = '';
  kubeconfigPath = '';
  pid = 0;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (msg: HostResponse) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`emulator: ${msg.error}`));
      else p.resolve(msg.result);
    });
    child.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`emulator exited (${code})`));
      this.pending.clear();
    });
  }

  /** `tls`: serve HTTPS with a self-signed certificate, as a cluster's API server does. */
  static async start(profileDir?: string, tls = false): Promise<EmulatorHandle> {
    const entry = fileURLToPath(new URL('./emulator-host.js', import.meta.url));
    // The emulator holds up to 100k objects plus watch history; give it room beyond V8's default.
    const child = fork(entry, tls ? ['--tls'] : [], {
      execArgv: ['--max-old-space-size=8192', ...profileFlags(profileDir, 'emulator')],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const handle = new EmulatorHandle(child);
    await new Promise<void>((resolve, reject) => {
      handle.pending.set(0, { resolve: () => resolve(), reject });
    });
    const info = await handle.call('info', undefined);
    handle.url = info.url;
    handle.kubeconfigPath = info.kubeconfigPath;
    handle.pid = info.pid;
    return handle;
  }

  call<K extends OpName>(op: K, args: Args<K>): Promise<Result<K>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, op, args } satisfies HostRequest);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.call('stop', undefined).catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
