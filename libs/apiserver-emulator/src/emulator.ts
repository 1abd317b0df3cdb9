import { writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { ADMIN_TOKEN } from './authn.js';
import type { EmulatorClock } from './clock.js';
import type { Faults } from './faults.js';
import type { WatchHub } from './http/watch-hub.js';
import type { RequestLog } from './request-log.js';
import type { KubeObject, UserInfo } from './types.js';
import { clone } from './util.js';
import { ObjectClient } from './client.js';
import { Controllers, type ControllerOptions } from './controllers/index.js';
import { EmulatorCore, type CoreOptions } from './core.js';
import { CONTROL_PREFIX, handleControl, type ControlTarget } from './http/control.js';
import { handle } from './http/handler.js';
import { kubeconfigText } from './kubeconfig.js';
import { selfSignedCertificate } from './tls.js';

export interface StartOptions extends CoreOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Serve HTTPS with a self-signed certificate, so kubectl sends bearer tokens. Default false. */
  tls?: boolean;
  /** Also write the kubeconfig to this file. */
  kubeconfigPath?: string;
  /**
   * The address clients are given (`url`, kubeconfigs) when it differs from where the emulator
   * listens: a published container port, or a service name on a container network.
   */
  advertiseUrl?: string;
  controllers?: ControllerOptions;
  /** Serve the /__emulator/ runtime control endpoints (the CLI turns them on). Default false. */
  control?: boolean;
}

/**
 * A running emulator. `core` holds the state and every control surface; the methods here
 * manage the HTTP listener and credentials.
 */
export class Emulator implements ControlTarget {
  readonly objects: ObjectClient;
  readonly controllers: Controllers;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;

  constructor(
    readonly core: EmulatorCore,
    private readonly opts: StartOptions,
  ) {
    this.objects = new ObjectClient(core.svc);
    this.controllers = new Controllers(core, opts.controllers);
  }

  /** Injected latency and error responses. */
  get faults(): Faults {
    return this.core.faults;
  }

  /** Open watches: close, drop, stall, expire (410). */
  get watches(): WatchHub {
    return this.core.watches;
  }

  /** Every request answered, with exact counters per verb/resource/user. */
  get log(): RequestLog {
    return this.core.log;
  }

  /** The emulator's time (manual, accelerated or real). */
  get clock(): EmulatorClock {
    return this.core.clock;
  }

  /** Expires watch history and continue tokens up to now (etcd compaction); returns the resourceVersion. */
  compact(): number {
    const rv = this.core.store.resourceVersion;
    this.core.store.compact(rv);
    return rv;
  }

  /** Turns RBAC enforcement on or off (reviews answer from RBAC either way). */
  setRbac(enabled: boolean): void {
    this.core.rbacEnabled = enabled;
  }

  /** Starts a Job of a CronJob now (needs controllers.cronJobs). */
  runCronJob(namespace: string, name: string): KubeObject {
    return clone(
      this.requireController(this.controllers.cronJobs, 'cronJobs').runNow(namespace, name),
    );
  }

  /** Makes a Job succeed: Pod Succeeded, status.succeeded, Complete condition, completionTime (needs controllers.jobs). */
  completeJob(namespace: string, name: string): KubeObject {
    return clone(
      this.requireController(this.controllers.jobs, 'jobs').finish(namespace, name, 'succeed'),
    );
  }

  /** Makes a Job fail: Pod Failed, status.failed, Failed condition (needs controllers.jobs). */
  failJob(namespace: string, name: string, reason?: string, message?: string): KubeObject {
    return clone(
      this.requireController(this.controllers.jobs, 'jobs').finish(
        namespace,
        name,
        'fail',
        reason,
        message,
      ),
    );
  }

  private requireController<T>(c: T | undefined, name: string): T {
    if (!c)
      throw new Error(
        `the ${name} controller is not running; start the emulator with controllers: { ${name}: true }`,
      );
    return c;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    if (this.opts.advertiseUrl) return this.opts.advertiseUrl;
    return `${this.opts.tls ? 'https' : 'http'}://${this.opts.host ?? '127.0.0.1'}:${this.boundPort}`;
  }

  /** Admin kubeconfig (token over https, anonymous admin over http). */
  get kubeconfig(): string {
    return kubeconfigText(this.url, { name: 'admin', token: ADMIN_TOKEN });
  }

  get kubeconfigPath(): string | undefined {
    return this.opts.kubeconfigPath;
  }

  /**
   * A kubeconfig that authenticates as a ServiceAccount with a token this emulator issued.
   * kubectl sends tokens only over https (start with tls: true); client-node sends them either way.
   */
  kubeconfigForServiceAccount(namespace: string, name: string): string {
    const token = this.core.authn.issueServiceAccountToken(namespace, name);
    return kubeconfigText(this.url, { name: `${namespace}-${name}`, token }, namespace);
  }

  /** A bearer token for a ServiceAccount (valid while it exists), e.g. for client-node's KubeConfig. */
  serviceAccountToken(namespace: string, name: string): string {
    return this.core.authn.issueServiceAccountToken(namespace, name);
  }

  /** Accepts `token` as the given user from now on. */
  addToken(token: string, user: UserInfo): void {
    this.core.authn.addStaticToken(token, user);
  }

  kubeconfigForToken(token: string, userName = 'user'): string {
    return kubeconfigText(this.url, { name: userName, token });
  }

  async listen(): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      if (this.opts.control && req.url?.startsWith(CONTROL_PREFIX))
        void handleControl(this, req, res, req.url.split('?')[0]!);
      else void handle(this.core, req, res);
    };
    const server = this.opts.tls
      ? createHttpsServer(selfSignedCertificate(), handler)
      : createHttpServer(handler);
    server.keepAliveTimeout = 30000;
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort || this.opts.port || 0, this.opts.host ?? '127.0.0.1', () =>
        resolve(),
      );
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    this.core.serverAddress = `${this.opts.host ?? '127.0.0.1'}:${this.boundPort}`;
    if (this.opts.kubeconfigPath) writeFileSync(this.opts.kubeconfigPath, this.kubeconfig);
  }

  /** Stops serving and stops the controllers. */
  async stop(): Promise<void> {
    this.controllers.stop();
    await this.closeListener();
  }

  /** Closes the listener and every connection (open watches end abruptly); state is kept. */
  async closeListener(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.core.watches.drop();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops and starts again on the same port with the same objects (an API server restart). */
  async restart(downMs = 0): Promise<void> {
    await this.closeListener();
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.listen();
  }
}

/** Starts an emulator: `const emu = await start({ port: 0 }); … await emu.stop();` */
export async function start(opts: StartOptions = {}): Promise<Emulator> {
  const garbageCollection = opts.garbageCollection ?? opts.controllers?.garbageCollector ?? true;
  const emu = new Emulator(new EmulatorCore({ ...opts, garbageCollection }), opts);
  await emu.listen();
  return emu;
}
