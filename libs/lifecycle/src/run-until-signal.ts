import { createLogger, type Logger } from '@payments/logger';
import { launcherPid, watchParent } from './parent-watch';
import { describeStartupFailure } from './startup-problems';

export type Stop = () => Promise<void>;

const shutdownHooks: Stop[] = [];

/**
 * Runs `hook` after the service's own stop function, when the process stops on a signal: for what
 * must outlive the service's work, such as exporting the last buffered trace spans.
 */
export function addShutdownHook(hook: Stop): void {
  shutdownHooks.push(hook);
}

async function runShutdownHooks(logger: Logger): Promise<void> {
  for (const hook of shutdownHooks) await hook().catch((err: unknown) => logger.warn({ err }, 'shutdown hook failed'));
}

/**
 * Reads the service's configuration. A bad value ends the process with one `fatal` log line naming
 * the variable (no stack), as a failed start does.
 */
export function loadConfigOrExit<C>(service: string, load: () => C): C {
  try {
    return load();
  } catch (err) {
    logStartupFailure(createLogger(service), err);
    process.exit(1);
  }
}

/**
 * Runs a service until SIGTERM, SIGINT or SIGHUP, then calls its stop function (which drains
 * in-flight work), giving it `shutdownGraceMs` before exiting anyway. Started by `npm start`, it also stops
 * when that launcher dies (see STOP_WITH_PARENT_ENV). A failed start exits with code 1 after one
 * `fatal` line: for the failures an operator can fix (Postgres or NATS out of reach, a port in use,
 * a bad setting), that line says what is wrong and what to do, without a stack.
 */
export async function runUntilSignal(opts: {
  logger: Logger;
  start: () => Promise<Stop>;
  /** How long stopping may take before the process exits anyway (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  /** The ports the service listens on, by the variable that sets each: names it when one is taken. */
  ports?: Record<string, number>;
}): Promise<void> {
  const { logger, start, shutdownGraceMs } = opts;
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));

  let stop: Stop;
  try {
    stop = await start();
  } catch (err) {
    logStartupFailure(logger, err, opts.ports);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (why: { signal: string } | { reason: string }) => {
    if (stopping) return;
    stopping = true;
    logger.info(why, 'shutting down: draining in-flight work');
    const timer = setTimeout(() => {
      logger.warn({ shutdownGraceMs }, 'grace period over: exiting with work still in flight');
      process.exit(1);
    }, shutdownGraceMs);
    timer.unref();
    try {
      await stop();
      logger.info('stopped cleanly');
      await runShutdownHooks(logger);
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error while stopping');
      await runShutdownHooks(logger);
      process.exit(1);
    }
  };
  // on, not once: a second signal (Ctrl-C reaches the process group, and npm start forwards it too)
  // must not fall back to the default action and kill the process mid-drain.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void shutdown({ signal }));
  const launcher = launcherPid();
  if (launcher !== undefined)
    watchParent(launcher, () => void shutdown({ reason: `its launcher (pid ${launcher}) exited` }));
}

function logStartupFailure(logger: Logger, err: unknown, ports?: Record<string, number>): void {
  const known = describeStartupFailure(err, { ports });
  if (known) logger.fatal({ problem: known.problem }, known.message);
  else logger.fatal({ err }, 'start-up failed');
}
