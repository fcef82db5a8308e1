import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs to stdout, one line per event, with the service name on every line. */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', '*.authorization', '*.integration_token', '*.signing_secret'], censor: '[redacted]' },
  });
}
