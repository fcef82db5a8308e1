import type { Logger } from '@payments/logger';

export type Stop = () => Promise<void>;

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
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error while stopping');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
