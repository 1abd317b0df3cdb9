import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { ConfigError, configSummary, type CommonConfig, type Env } from '#config';
import { exitAfterFlush } from './exit.js';
import { IdleGc, inspectorFullGc } from './idle-gc.js';
import { Logger, stderrSink, createOperatorMetrics, NestJsonLogger } from '#observability';
import { OperatorCoreModule, type CoreContext } from './core.module.js';

export interface OperatorApp<C extends CommonConfig> {
  /** `watcher` or `worker`: the `app` field of every log line. */
  readonly name: string;
  /** Parses the environment; throws ConfigError on a bad value. */
  loadConfig(env: Env): C;
  /** The app's root module; it must import `core`, which provides the shared tokens. */
  module(core: DynamicModule, context: CoreContext<C>): DynamicModule;
}

/** Beyond the grace period, shutdown hooks get this long before the process is forced out. */
const FORCED_EXIT_SLACK_MS = 5000;

/**
 * Starts an operator process: validated config (a bad value exits 1 naming the variable), JSON
 * logs, a private metrics registry, the probe server on HEALTH_PORT, /metrics on METRICS_PORT,
 * the shared Redis connection, and graceful shutdown on SIGTERM/SIGINT (exit 0 when every
 * shutdown hook finished within SHUTDOWN_GRACE_PERIOD, 1 otherwise). The process is a NestJS
 * application context (modules, providers, lifecycle hooks) without an HTTP framework: its two
 * listeners answer three paths, and loading one cost a tenth of its start. Once quiet after a
 * burst, it collects its garbage (IdleGc).
 */
export async function runOperatorApp<C extends CommonConfig>(app: OperatorApp<C>): Promise<void> {
  const config = await loadConfigOrExit(app);
  const logger = new Logger({ level: config.logLevel, fields: { app: app.name } });
  exitOnCrash(logger);
  const context: CoreContext<C> = {
    app: app.name,
    config,
    logger,
    metrics: createOperatorMetrics(),
  };
  let nest: INestApplicationContext | undefined;
  // Creating the context also runs the bootstrap hooks (the watcher starts campaigning there), and
  // Nest's signal handling can only be set up after: a signal that comes meanwhile is raised again
  // once it is, so it still stops the process gracefully.
  let early: NodeJS.Signals | undefined;
  const remember = (signal: NodeJS.Signals) => (early ??= signal);
  process.on('SIGTERM', remember).on('SIGINT', remember);
  try {
    nest = await NestFactory.createApplicationContext(
      app.module(OperatorCoreModule.forRoot(context), context),
      {
        logger: new NestJsonLogger(logger.child({ component: 'nest' })),
        abortOnError: false,
      },
    );
    nest.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    forceExitAfterGracePeriod(config.shutdownGracePeriodMs, logger);
  } catch (err) {
    logger.error('start failed', { err });
    await nest?.close().catch(() => undefined);
    await exitAfterFlush(1);
  } finally {
    process.off('SIGTERM', remember).off('SIGINT', remember);
  }
  new IdleGc(await inspectorFullGc(), logger.child({ component: 'idle-gc' })).start();
  logger.info('started', { config: configSummary(config) });
  if (early) process.kill(process.pid, early);
}

async function loadConfigOrExit<C extends CommonConfig>(app: OperatorApp<C>): Promise<C> {
  try {
    return app.loadConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // The logger's level is itself configuration, so this line bypasses it.
    new Logger({ sink: stderrSink, fields: { app: app.name } }).error(
      `invalid configuration: ${err.message}`,
      { problems: err.problems },
    );
    return exitAfterFlush(1);
  }
}

function exitOnCrash(logger: Logger): void {
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { err });
    void exitAfterFlush(1);
  });
  process.on('unhandledRejection', (err) => {
    logger.error('unhandled rejection', { err });
    void exitAfterFlush(1);
  });
}

/** A backstop for a shutdown that hangs outside the coordinator's hooks (e.g. in Nest itself). */
function forceExitAfterGracePeriod(gracePeriodMs: number, logger: Logger): void {
  const arm = () => {
    setTimeout(() => {
      logger.error('shutdown did not finish within the grace period; exiting');
      void exitAfterFlush(1);
    }, gracePeriodMs + FORCED_EXIT_SLACK_MS).unref();
  };
  process.once('SIGTERM', arm);
  process.once('SIGINT', arm);
}
