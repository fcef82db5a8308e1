import type { Bus } from '@payments/bus';
import {
  CallbackListQuerySchema,
  compileValidator,
  EVENT_ID_PATTERN,
  ServiceError,
  Subjects,
  type CallbackListQuery,
} from '@payments/contracts';
import type { GatewayContext } from '../http/context';
import type { Endpoint } from '../http/endpoint';
import { validationError } from '../http/problem';

const validateQuery = compileValidator(CallbackListQuerySchema);
const EVENT_ID = new RegExp(EVENT_ID_PATTERN);
const DEFAULT_LIMIT = 50;

/** Callback visibility (docs/api.md, "Callback visibility"): list, inspect and redeliver a tenant's events. */
export function callbackEndpoints(bus: Bus): Endpoint<unknown>[] {
  const list: Endpoint<CallbackListQuery> = {
    method: 'get',
    path: '/api/v1/callbacks',
    idempotency: 'none',
    parse(ctx) {
      const raw: Record<string, unknown> = { ...ctx.query };
      if (typeof raw.limit === 'string' && /^\d+$/.test(raw.limit)) raw.limit = Number(raw.limit);
      const result = validateQuery(raw);
      if (!result.ok) throw validationError(result.errors.map((e) => ({ ...e, in: 'query' as const })));
      return result.value;
    },
    async handle(query, ctx) {
      const reply = await bus.request(Subjects.callbacks.list, {
        tenant_id: ctx.state.tenantId!,
        status: query.status,
        limit: query.limit ?? DEFAULT_LIMIT,
        cursor: query.cursor,
      });
      return {
        status: 200,
        body: reply.items,
        headers: reply.next_cursor ? { 'x-next-cursor': reply.next_cursor } : undefined,
      };
    },
  };

  const get: Endpoint<string> = {
    method: 'get',
    path: '/api/v1/callbacks/:event_id',
    idempotency: 'none',
    parse: (ctx) => eventIdParam(ctx),
    async handle(eventId, ctx) {
      const view = await bus.request(Subjects.callbacks.get, {
        tenant_id: ctx.state.tenantId!,
        event_id: eventId,
      });
      return { status: 200, body: view };
    },
  };

  const retry: Endpoint<string> = {
    method: 'post',
    path: '/api/v1/callbacks/:event_id/retry',
    idempotency: 'optional',
    parse: (ctx) => eventIdParam(ctx),
    async handle(eventId, ctx) {
      const reply = await bus.request(Subjects.callbacks.retry, {
        tenant_id: ctx.state.tenantId!,
        event_id: eventId,
      });
      return { status: 202, body: reply };
    },
  };

  return [list, get, retry] as Endpoint<unknown>[];
}

function eventIdParam(ctx: GatewayContext): string {
  const value = ctx.params.event_id ?? '';
  if (!EVENT_ID.test(value)) {
    // An id that cannot exist is simply not found, as for another tenant's id.
    throw new ServiceError('not_found', `no callback event ${value}`);
  }
  return value;
}
