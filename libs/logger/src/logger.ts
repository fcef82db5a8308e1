import pino, { type DestinationStream, type Logger } from 'pino';
import { activeTraceIds } from '@payments/telemetry';
import { serializeError } from './errors';

export type { Logger };

/**
 * Fields that hold secrets, wherever a log call puts them (at the top of the line or one object
 * down): written as "[redacted]". Wire names and the names the code uses for them.
 */
export const SECRET_FIELDS = [
  'authorization',
  'password',
  'signing_secret',
  'signingSecret',
  'previous_signing_secret',
  'integration_token',
  'integrationToken',
  'access_token',
  'accessToken',
  'refresh_token',
  'client_secret',
  'clientSecret',
  'cert_pem',
  'certPem',
  'key_pem',
  'keyPem',
  'private_key',
  'privateKey',
  'sealed_credentials',
  'sealedCredentials',
  'webhook_secret',
  'webhookSecret',
  'natsPassword',
] as const;

/** The redact paths: each secret field at the top and one level down, plus request headers. */
export const REDACT_PATHS = [
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
];

/**
 * JSON logs to stdout, one line per event, with the service name (and trace ids, inside a span) on
 * every line. Secret fields are redacted, and errors (`err`, `error`) are written without Postgres'
 * row data (see serializeError). `destination` is for tests.
 */
export function createLogger(
  service: string,
  logLevel = process.env.LOG_LEVEL ?? 'info',
  destination?: DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level: logLevel,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // trace_id and span_id of the active span, so a log line leads to its trace (and back).
    mixin: activeTraceIds,
    serializers: { err: serializeError, error: serializeError },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
