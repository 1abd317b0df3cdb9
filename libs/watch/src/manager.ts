import { MANAGED_BY_VALUE } from '#api';
import {
  LeaderElector,
  silentLog,
  type LeaderElectorOptions,
  type LeaderStatusGauge,
  type Log,
  type RestClient,
  type StoppedReason,
} from '#kube';
import { KeySource, type KeySourceOptions } from './key-source.js';

export interface ManagerOptions {
  readonly rest: RestClient;
  readonly leaderElection: Omit<LeaderElectorOptions, 'rest' | 'callbacks' | 'metrics' | 'log'>;
  readonly controller: Omit<KeySourceOptions, 'rest' | 'log'>;
  readonly metrics?: LeaderStatusGauge;
  readonly log?: Log;
  /**
   * Leadership was lost (renewals failed past the deadline, or another holder was seen). Work has
   * already stopped; controller-runtime exits here so the process restarts clean.
   */
  readonly onLost: () => void;
}

/** What /readyz reports: a standby is ready as a standby; a leader once synced and watching. */
export interface ManagerStatus {
  readonly leader: boolean;
  readonly synced: boolean;
  readonly healthy: boolean;
  readonly ready: boolean;
}

/**
 * The watcher app's manager: campaigns for the Lease and, while leading, runs a fresh
 * KeySource (informers + enqueueing); when leadership ends it stops the controller
 * before anything else, so a successor never overlaps with it longer than a lease allows.
 */
export class Manager {
  readonly elector: LeaderElector;
  private current: KeySource | undefined;
  private readonly log: Log;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.log ?? silentLog;
    this.elector = new LeaderElector({
      eventController: MANAGED_BY_VALUE,
      ...options.leaderElection,
      rest: options.rest,
      metrics: options.metrics,
      log: this.log,
      callbacks: {
        onStartedLeading: (signal, term) => this.lead(signal, term),
        onStoppedLeading: (reason) => {
          if (reason !== 'lost') return;
          // Its writes already stopped; the answers to those in flight are accounted for first.
          void (this.current?.stop() ?? Promise.resolve()).then(() => options.onLost());
        },
      },
    });
  }

  /** Campaigns and leads until leadership is lost or stop() is called. */
  run(): Promise<StoppedReason> {
    return this.elector.run();
  }

  /** SIGTERM: stop acting, release the Lease so a standby takes over within a retry period. */
  async stop(): Promise<void> {
    await this.elector.stop();
    await this.current?.stop();
  }

  /** The queue lost its data: re-add every key (only the leader has keys to give). */
  reAddAll(): number {
    return this.current?.reAddAll() ?? 0;
  }

  get controller(): KeySource | undefined {
    return this.current;
  }

  status(): ManagerStatus {
    const leader = this.elector.isLeader;
    const synced = leader && (this.current?.synced ?? false);
    const healthy = leader && (this.current?.healthy ?? false);
    return { leader, synced, healthy, ready: !leader || (synced && healthy) };
  }

  private lead(signal: AbortSignal, term: number): void {
    const controller = new KeySource({
      ...this.options.controller,
      rest: this.options.rest,
      log: this.log,
      term,
      // Redis saw a newer term: this process no longer leads, whatever its Lease renewals say.
      onFenced: (err) => {
        this.options.metrics?.fenced?.(this.options.leaderElection.name, err.refused);
        this.options.onLost();
      },
    });
    this.current = controller;
    controller.start();
    signal.addEventListener(
      'abort',
      () => {
        void controller.stop();
      },
      { once: true },
    );
  }
}
