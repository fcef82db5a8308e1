import pino, { type Logger } from 'pino';
import { activeTraceIds } from '@payments/telemetry';

export type { Logger };

/** JSON logs to stdout, one line per event, with the service name (and trace ids, inside a span) on every line. */
export function createLogger(service: string, logLevel = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level: logLevel,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // trace_id and span_id of the active span, so a log line leads to its trace (and back).
    mixin: activeTraceIds,
    redact: {
      paths: ['req.headers.authorization', '*.authorization', '*.integration_token', '*.signing_secret'],
      censor: '[redacted]',
    },
  });
}
