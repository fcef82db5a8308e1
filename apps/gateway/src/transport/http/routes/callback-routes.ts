import type { Bus } from '@payments/bus';
import {
  CALLBACK_REPLAY_MAX_DAYS,
  CallbackListQuerySchema,
  CallbackReplayRequestSchema,
  compileValidator,
  EVENT_ID_PATTERN,
  ServiceError,
  Subjects,
  type CallbackListQuery,
  type FieldError,
} from '@payments/contracts';
import type { GatewayContext } from '../context';
import { endpoint, type Endpoint, type MountableEndpoint } from '../endpoint';
import { requestBody } from '../json-body';
import { validationError } from '../problem';
import { SEARCH_ROWS_PER_TOKEN } from './receivable-routes';

const validateQuery = compileValidator(CallbackListQuerySchema);
const validateReplay = compileValidator(CallbackReplayRequestSchema);
const DAY_MS = 24 * 60 * 60 * 1000;
const EVENT_ID = new RegExp(EVENT_ID_PATTERN);
const DEFAULT_LIMIT = 50;

/** Callback visibility (docs/api.md, "Callback visibility"): list, inspect and redeliver a tenant's events. */
export function callbackEndpoints(bus: Bus): MountableEndpoint[] {
  const list: Endpoint<CallbackListQuery> = {
    operation: 'listCallbacks',
    parse(ctx) {
      const raw: Record<string, unknown> = { ...ctx.query };
      if (typeof raw.limit === 'string' && /^\d+$/.test(raw.limit)) raw.limit = Number(raw.limit);
      const result = validateQuery(raw);
      if (!result.ok) throw validationError(result.errors.map((e) => ({ ...e, in: 'query' as const })));
      return result.value;
    },
    // A listing costs the rows it may answer, as a search does.
    reads: (query) => Math.ceil((query.limit ?? DEFAULT_LIMIT) / SEARCH_ROWS_PER_TOKEN),
    async handle(query, ctx, tenant) {
      const reply = await bus.request(Subjects.callbacks.list, {
        tenant_id: tenant.tenantId,
        status: query.status,
        limit: query.limit ?? DEFAULT_LIMIT,
        cursor: query.cursor,
        receivable_id: query.receivable_id?.toLowerCase(),
      });
      return {
        status: 200,
        body: reply.items,
        headers: reply.next_cursor ? { 'x-next-cursor': reply.next_cursor } : undefined,
      };
    },
  };

  const get: Endpoint<string> = {
    operation: 'getCallback',
    parse: (ctx) => eventIdParam(ctx),
    async handle(eventId, ctx, tenant) {
      const view = await bus.request(Subjects.callbacks.get, {
        tenant_id: tenant.tenantId,
        event_id: eventId,
      });
      // An older callback-svc (mid-deploy) answers without the payload or the attempts' excerpts:
      // said as unknown, not left out.
      const attempts = view.attempts.map((a) => ({ ...a, response_excerpt: a.response_excerpt ?? null }));
      return { status: 200, body: { ...view, attempts, payload: view.payload ?? null } };
    },
  };

  const retry: Endpoint<string> = {
    operation: 'retryCallback',
    parse: (ctx) => eventIdParam(ctx),
    async handle(eventId, ctx, tenant) {
      const reply = await bus.request(Subjects.callbacks.retry, {
        tenant_id: tenant.tenantId,
        event_id: eventId,
      });
      return { status: 202, body: reply };
    },
  };

  const replay: Endpoint<{ since: Date; until: Date | null }> = {
    operation: 'replayCallbacks',
    parse: (ctx) => replaySpan(ctx, new Date()),
    async handle({ since, until }, ctx, tenant) {
      const reply = await bus.request(Subjects.callbacks.replay, {
        tenant_id: tenant.tenantId,
        since: since.toISOString(),
        until: until?.toISOString() ?? null,
      });
      return { status: 202, body: reply };
    },
  };

  return [endpoint(list), endpoint(get), endpoint(retry), endpoint(replay)];
}

/**
 * The span of a replay: `since` a date-time neither in the future nor more than
 * CALLBACK_REPLAY_MAX_DAYS back (a replay is for an outage just mended, not the whole history),
 * `until` (optional) after it.
 */
function replaySpan(ctx: GatewayContext, now: Date): { since: Date; until: Date | null } {
  // No body at all is a missing `since`, said as such.
  const result = validateReplay(requestBody(ctx) ?? {});
  if (!result.ok) throw validationError(result.errors);
  const since = new Date(result.value.since);
  const until = result.value.until === undefined ? null : new Date(result.value.until);
  const errors: FieldError[] = [];
  if (since.getTime() > now.getTime()) errors.push({ path: '/since', message: 'must not be in the future' });
  else if (since.getTime() < now.getTime() - CALLBACK_REPLAY_MAX_DAYS * DAY_MS)
    errors.push({ path: '/since', message: `must be at most ${CALLBACK_REPLAY_MAX_DAYS} days back` });
  if (until !== null && until.getTime() <= since.getTime())
    errors.push({ path: '/until', message: 'must be after since' });
  if (errors.length > 0) throw validationError(errors);
  return { since, until };
}

function eventIdParam(ctx: GatewayContext): string {
  const value = ctx.params.event_id ?? '';
  if (!EVENT_ID.test(value)) {
    // An id that cannot exist is simply not found, as for another tenant's id.
    throw new ServiceError('not_found', `no callback event ${value}`);
  }
  return value;
}
