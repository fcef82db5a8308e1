import type { Next } from 'koa';
import type Router from '@koa/router';
import { MAX_BATCH_ITEMS, ServiceError } from '@payments/contracts';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { fingerprint, readIdempotencyKey, runIdempotently, type IdempotencyPolicy } from '../idempotency/idempotency';
import type { GatewayContext, GatewayState } from './context';
import { writeResponse } from './error-handler';
import { requestBody } from './json-body';
import type { Admissions } from './admission';
import { problemResponse, type HttpResponse } from './problem';

type Middleware = (ctx: GatewayContext, next: Next) => Promise<unknown>;

/**
 * One API operation: how to read and validate its input from the request, and what to do with it.
 * The shared pipeline around it (auth, rate limit, body, idempotency) is assembled by mountEndpoint.
 */
export interface Endpoint<Input> {
  method: 'get' | 'post' | 'put';
  path: string;
  idempotency: IdempotencyPolicy;
  /**
   * Validates and returns the input (with what it needs from the gateway's own tables), or throws a
   * ServiceError naming every bad field. It runs before the Idempotency-Key is taken, so a refusal
   * here is never stored under the key.
   */
  parse(ctx: GatewayContext): Input | Promise<Input>;
  handle(input: Input, ctx: GatewayContext): Promise<HttpResponse>;
  /** What the request costs against the tenant's rate limit: the charges it creates. Default: 1. */
  charges?(input: Input): number;
}

export interface EndpointPipeline {
  /** Runs before the body is read: the access token. */
  guards: Middleware[];
  bodyParser: Middleware;
  /**
   * The tenant's rate limit and the Idempotency-Key's claim, taken together once the input is valid
   * and before anything is stored.
   */
  admissions: Admissions;
  idempotency: IdempotencyStore;
}

export function mountEndpoint<Input>(
  router: Router<GatewayState>,
  pipeline: EndpointPipeline,
  endpoint: Endpoint<Input>,
): void {
  const run = async (ctx: GatewayContext) => {
    const key = readIdempotencyKey(ctx.get('idempotency-key'), endpoint.idempotency);
    const body = requestBody(ctx);
    const identity =
      key === undefined
        ? undefined
        : {
            tenantId: ctx.state.tenantId!,
            key,
            method: ctx.method,
            path: ctx.path,
            fingerprint: fingerprint(ctx.method, ctx.path, body),
          };
    const input = await parseCounted(ctx, endpoint, pipeline.admissions);
    const begun = await pipeline.admissions.admit(ctx, endpoint.charges?.(input) ?? 1, identity);
    const response = await runIdempotently(
      pipeline.idempotency,
      identity && begun && { identity, begun },
      () => endpoint.handle(input, ctx),
      (err) => problemResponse(err, ctx.state.requestId),
    );
    writeResponse(ctx, response);
  };
  router.register(endpoint.path, [endpoint.method.toUpperCase()], [...pipeline.guards, pipeline.bodyParser, run]);
}

/**
 * The endpoint's input. A request refused as invalid still costs 1 against the rate limit (and is a
 * 429 once the tenant is over it), so a flood of bad requests is limited like any other.
 */
async function parseCounted<Input>(
  ctx: GatewayContext,
  endpoint: Endpoint<Input>,
  admissions: Admissions,
): Promise<Input> {
  try {
    return await endpoint.parse(ctx);
  } catch (err) {
    await admissions.admit(ctx, 1);
    throw err;
  }
}

/** Batches above the limit are refused as too large (413) before item validation. */
export function assertBatchSize(body: unknown): void {
  if (Array.isArray(body) && body.length > MAX_BATCH_ITEMS) {
    throw new ServiceError(
      'payload_too_large',
      `a request holds at most ${MAX_BATCH_ITEMS} items; this one has ${body.length}. Split it into several requests.`,
    );
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID path parameter, lower-cased (the key services match on); anything else is a validation error
 * naming the parameter. Answers still show an id as the ERP spelled it at creation: the services
 * reply with their stored spelling, never with this one.
 */
export function uuidParam(ctx: GatewayContext, name: string): string {
  const value = ctx.params[name] ?? '';
  if (!UUID.test(value))
    throw new ServiceError('validation_failed', `the path parameter ${name} must be a UUID`, [
      { in: 'path', path: name, message: 'must be a UUID' },
    ]);
  return value.toLowerCase();
}
