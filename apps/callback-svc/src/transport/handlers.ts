import type { RegisterHandlers } from '@payments/bus';
import {
  EVENT_ID_PATTERN,
  isUuid,
  MAX_CALLBACK_REPLAY,
  QueueGroups,
  ServiceError,
  Subjects,
  type CallbackEventSummary,
  type CallbackEventView,
} from '@payments/contracts';
import { payloadOf, type EventView } from '../domain/callback-event';
import { deliveryHealth, deliveryStats, type DeliveryStatsReader } from '../domain/delivery-stats';
import type { EventStore } from '../domain/event-store';

export interface HandlerDeps {
  store: EventStore;
  /** The per-minute delivery aggregates, for the admin statistics. */
  stats: DeliveryStatsReader;
  /** Called after a dead event was queued again: wakes the delivery engine. */
  onRetry: () => void;
}

/**
 * Visibility API behind the gateway: list, inspect, redeliver (one, or every dead one of a time
 * span). Always scoped to the asking tenant. And the admin API's delivery statistics, across tenants.
 */
export const registerHandlers: RegisterHandlers<HandlerDeps> = (bus, { store, stats, onRetry }) => {
  const queue = QueueGroups.callbacks;
  const list = bus.serve(
    Subjects.callbacks.list,
    async (cmd) => {
      const after = cmd.cursor === undefined ? undefined : decodeCursor(cmd.cursor);
      const receivableId = cmd.receivable_id === undefined ? undefined : uuidField(cmd.receivable_id, 'receivable_id');
      const rows = await store.list(cmd.tenant_id, cmd.status, cmd.limit + 1, after, receivableId);
      const page = rows.slice(0, cmd.limit);
      const last = page[page.length - 1];
      return { items: page.map(toSummary), next_cursor: rows.length > cmd.limit && last ? encodeCursor(last) : null };
    },
    { queue },
  );

  const get = bus.serve(
    Subjects.callbacks.get,
    async (cmd) => {
      const view = await store.find(cmd.tenant_id, cmd.event_id);
      if (!view) throw new ServiceError('not_found', `no callback event ${cmd.event_id}`);
      return toView(view);
    },
    { queue },
  );

  const retry = bus.serve(
    Subjects.callbacks.retry,
    async (cmd) => {
      if (await store.retryDead(cmd.tenant_id, cmd.event_id)) {
        onRetry();
        return { status: 'success', message: 'the event was queued for delivery again', event_id: cmd.event_id };
      }
      const view = await store.find(cmd.tenant_id, cmd.event_id);
      if (!view) throw new ServiceError('not_found', `no callback event ${cmd.event_id}`);
      throw new ServiceError('conflict', `only dead events can be retried; this one is ${view.status}`);
    },
    { queue },
  );

  const replay = bus.serve(
    Subjects.callbacks.replay,
    async (cmd) => {
      const since = dateField(cmd.since, 'since');
      const until = cmd.until === null ? null : dateField(cmd.until, 'until');
      const replayed = await store.replayDead(cmd.tenant_id, since, until, MAX_CALLBACK_REPLAY);
      if (replayed > 0) onRetry();
      return { replayed, since: since.toISOString(), until: until?.toISOString() ?? null };
    },
    { queue },
  );

  const statsSeries = bus.serve(
    Subjects.callbacks.deliveryStats,
    async (cmd) =>
      deliveryStats(
        stats,
        cmd.window,
        cmd.tenant_id === undefined ? undefined : uuidField(cmd.tenant_id, 'tenant_id'),
        new Date(),
      ),
    { queue },
  );

  const health = bus.serve(
    Subjects.callbacks.deliveryHealth,
    async (cmd) => deliveryHealth(stats, cmd.window, new Date()),
    {
      queue,
    },
  );
  return [list, get, retry, replay, statsSeries, health];
};

/** The gateway checks these; checked again so that a bad one is a named refusal, not a Postgres error. */
function uuidField(value: string, path: string): string {
  if (!isUuid(value))
    throw new ServiceError('validation_failed', `${path} must be a UUID`, [
      { in: 'query', path, message: 'must be a UUID' },
    ]);
  return value.toLowerCase();
}

function dateField(value: string, path: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new ServiceError('validation_failed', `${path} must be a date-time`, [
      { path: `/${path}`, message: 'must be a date-time' },
    ]);
  return date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toSummary(v: EventView): CallbackEventSummary {
  return {
    event_id: v.eventId,
    event_type: v.eventType,
    url: v.url,
    status: v.status,
    created_at: v.createdAt.toISOString(),
    delivered_at: iso(v.deliveredAt),
    attempt_count: v.attemptCount,
    next_attempt_at: iso(v.nextAttemptAt),
  };
}

function toView(v: EventView): CallbackEventView {
  return {
    event_id: v.eventId,
    event_type: v.eventType,
    url: v.url,
    status: v.status,
    created_at: v.createdAt.toISOString(),
    delivered_at: iso(v.deliveredAt),
    attempts: (v.attempts ?? []).map((a) => ({
      attempted_at: a.attemptedAt.toISOString(),
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      response_excerpt: a.responseExcerpt,
    })),
    payload: v.body === undefined ? null : payloadOf(v.body),
  };
}

function encodeCursor(v: EventView): string {
  return Buffer.from(JSON.stringify([v.createdAt.toISOString(), v.eventId])).toString('base64url');
}

const EVENT_ID = new RegExp(EVENT_ID_PATTERN);

function decodeCursor(cursor: string): { createdAt: Date; eventId: string } {
  try {
    const [createdAt, eventId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    // A crafted cursor must fail here, not in Postgres (a 500): an event id can hold no U+0000.
    const year = date.getUTCFullYear();
    if (
      Number.isNaN(date.getTime()) ||
      year < 1 ||
      year > 9999 ||
      typeof eventId !== 'string' ||
      !EVENT_ID.test(eventId)
    )
      throw new Error('bad cursor');
    return { createdAt: date, eventId };
  } catch {
    throw new ServiceError('validation_failed', 'the cursor is not one this API handed out', [
      { in: 'query', path: 'cursor', message: 'is invalid' },
    ]);
  }
}
