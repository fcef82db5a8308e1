import type { Next } from 'koa';
import type Router from '@koa/router';
import { apiOperation, isUuid, MAX_BATCH_ITEMS, routerPath, ServiceError, type OperationId } from '@payments/contracts';
import type { IdempotencyStore } from '../../db/idempotency-store';
import { fingerprint, readIdempotencyKey, runIdempotently } from '../../domain/idempotency/idempotency';
import { authenticatedTenant, type AuthenticatedTenant, type GatewayContext, type GatewayState } from './context';
import { writeResponse } from './error-handler';
import { requestBody } from './json-body';
import type { Admissions } from './admission';
import { problemResponse, type HttpResponse } from './problem';

type Middleware = (ctx: GatewayContext, next: Next) => Promise<unknown>;

/**
 * One API operation: how to read and validate its input from the request, and what to do with it.
 * Its method, path and Idempotency-Key policy are the operation's in libs/contracts (the OpenAPI
 * document's list), named by `operation`: a route the document does not describe cannot be mounted.
 * The shared pipeline around it (auth, rate limit, body, idempotency) is assembled by mountEndpoint.
 */
export interface Endpoint<Input> {
  operation: OperationId;
  /**
   * Validates and returns the input (with what it needs from the gateway's own tables), or throws a
   * ServiceError naming every bad field. It runs before the Idempotency-Key is taken, so a refusal
   * here is never stored under the key.
   */
  parse(ctx: GatewayContext, tenant: AuthenticatedTenant): Input | Promise<Input>;
  handle(input: Input, ctx: GatewayContext, tenant: AuthenticatedTenant): Promise<HttpResponse>;
  /**
   * What the request costs against the tenant's rate limit: the charges it creates (a batch larger
   * than the burst is refused for good: split it). Default: 1, the token every request pays on arrival.
   */
  charges?(input: Input): number;
  /**
   * For a listing instead: tokens by the rows it may answer, taken up to the tenant's whole burst (so
   * the default page is never refused for good under a small burst; it waits for the bucket to fill).
   */
  reads?(input: Input): number;
}

export interface EndpointPipeline {
  /** Runs before the body is read: the access token. */
  guards: Middleware[];
  bodyParser: Middleware;
  /**
   * The tenant's rate limit: one token as the request arrives, before its body is read; then the rest
   * of its cost together with the Idempotency-Key's claim, once the input is valid and before anything
   * is stored.
   */
  admissions: Admissions;
  idempotency: IdempotencyStore;
}

/**
 * What every request costs as it arrives, once its access token names the tenant and before its body
 * is read: malformed JSON, a body too large or not JSON, nesting too deep, a missing Idempotency-Key
 * and invalid input all cost it, so a flood of them is limited (429) like any other request. A batch
 * pays the rest of its size once it is known.
 */
const ARRIVAL_COST = 1;

export function mountEndpoint<Input>(
  router: Router<GatewayState>,
  pipeline: EndpointPipeline,
  endpoint: Endpoint<Input>,
): void {
  const arrive: Middleware = async (ctx, next) => {
    await pipeline.admissions.admit(ctx, ARRIVAL_COST);
    return next();
  };
  const operation = apiOperation(endpoint.operation);
  const run = async (ctx: GatewayContext) => {
    const tenant = authenticatedTenant(ctx);
    const key = readIdempotencyKey(ctx.get('idempotency-key'), operation.idempotency);
    const body = requestBody(ctx);
    const identity =
      key === undefined
        ? undefined
        : {
            tenantId: tenant.tenantId,
            key,
            method: ctx.method,
            path: ctx.path,
            fingerprint: fingerprint(ctx.method, ctx.path, body),
          };
    const input = await endpoint.parse(ctx, tenant);
    const begun = endpoint.reads
      ? await pipeline.admissions.admitRead(ctx, endpoint.reads(input), identity, ARRIVAL_COST)
      : await pipeline.admissions.admit(ctx, endpoint.charges?.(input) ?? ARRIVAL_COST, identity, ARRIVAL_COST);
    const response = await runIdempotently(
      pipeline.idempotency,
      identity && begun && { identity, begun },
      () => endpoint.handle(input, ctx, tenant),
      (err) => problemResponse(err, ctx.state.requestId),
    );
    writeResponse(ctx, response);
  };
  mountOperation(router, endpoint.operation, [...pipeline.guards, arrive, pipeline.bodyParser, run]);
}

/**
 * Mounts the middleware of an operation outside the endpoint pipeline (authentication, signed
 * downloads) at the operation's own method and path.
 */
export function mountOperation(router: Router<GatewayState>, id: OperationId, middleware: Middleware[]): void {
  const operation = apiOperation(id);
  router.register(routerPath(operation), [operation.method.toUpperCase()], middleware);
}

/** An endpoint ready to mount, its input type sealed in, so endpoints of any input share one list. */
export type MountableEndpoint = (router: Router<GatewayState>, pipeline: EndpointPipeline) => void;

export function endpoint<Input>(definition: Endpoint<Input>): MountableEndpoint {
  return (router, pipeline) => mountEndpoint(router, pipeline, definition);
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

/**
 * A UUID path parameter, lower-cased (the key services match on); anything else is a validation error
 * naming the parameter. Answers still show an id as the ERP spelled it at creation: the services
 * reply with their stored spelling, never with this one.
 */
export function uuidParam(ctx: GatewayContext, name: string): string {
  const value = ctx.params[name] ?? '';
  if (!isUuid(value))
    throw new ServiceError('validation_failed', `the path parameter ${name} must be a UUID`, [
      { in: 'path', path: name, message: 'must be a UUID' },
    ]);
  return value.toLowerCase();
}
