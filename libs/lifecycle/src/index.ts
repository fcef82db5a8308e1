import type { Logger } from '@payments/logger';

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
 * Runs a service until SIGTERM or SIGINT, then calls its stop function (which drains in-flight work),
 * giving it `graceMs` before exiting anyway. A failed start exits with code 1.
 */
export async function runUntilSignal(opts: {
  logger: Logger;
  start: () => Promise<Stop>;
  graceMs: number;
}): Promise<void> {
  const { logger, start, graceMs } = opts;
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));

  let stop: Stop;
  try {
    stop = await start();
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight work');
    const timer = setTimeout(() => {
      logger.warn({ graceMs }, 'grace period over: exiting with work still in flight');
      process.exit(1);
    }, graceMs);
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
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
