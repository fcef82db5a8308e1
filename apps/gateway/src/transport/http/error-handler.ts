import type { Next } from 'koa';
import type { Logger } from '@payments/logger';
import { API_DOCS_PATH, OPENAPI_DOCUMENT_PATH, type ServiceError } from '@payments/contracts';
import { problemErrors, toServiceError as sharedToServiceError, type ProblemWording } from '@payments/http-problem';
import type { GatewayContext } from './context';

export { writeResponse } from '@payments/http-problem';

/**
 * The body limit a 413 thrown by a library names: the default BODY_LIMIT_BYTES (the JSON body reader,
 * http/json-body.ts, names the configured one itself).
 */
const GATEWAY_BODY_LIMIT_BYTES = 1024 * 1024;

const wording = (reference?: string): ProblemWording => ({
  service: 'the gateway',
  bodyLimitBytes: GATEWAY_BODY_LIMIT_BYTES,
  reference,
});

/**
 * Outermost middleware: every failure becomes application/problem+json; nothing else (no stack
 * trace, no HTML) ever leaves the gateway. Unknown routes and methods get problems too. Postgres out
 * of reach is 503 service_unavailable with Retry-After, as a service that does not answer is, so that
 * an ERP retries; anything else unexpected is 500. Shared with receivables-svc's webhook port
 * (libs/http-problem).
 */
export function errorHandler(
  logger: Logger,
  reference = `the API reference is at ${API_DOCS_PATH} (OpenAPI document: ${OPENAPI_DOCUMENT_PATH})`,
): (ctx: GatewayContext, next: Next) => Promise<void> {
  return problemErrors({ logger, ...wording(reference) });
}

/** What an error becomes on the wire (libs/http-problem), in the gateway's words. */
export function toServiceError(err: unknown): ServiceError {
  return sharedToServiceError(err, wording());
}
