/** @jsxRuntime automatic @jsxImportSource preact */
import { randomUUID } from 'node:crypto';
import { ok } from '../gateway/public-api';
import type { ConsoleContext } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { render } from '../views/render';
import { brasiliaInstant, brasiliaLocalValue } from '../views/locale';
import { auth, EVENT_ID, page, PAGE_SIZE, text, type TenantKit } from './handler-kit';
import { CallbackPage } from './pages/callback';
import { CALLBACK_STATUSES, CallbacksPage, type CallbackStatus } from './pages/callbacks';

/** GET /callbacks: the events sent, newest first, by delivery state. */
export async function callbacksPage({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const status = callbackStatus(single(ctx.query.status));
  const cursor = single(ctx.query.cursor);
  const result = await deps.api.GET('/api/v1/callbacks', {
    params: { query: { status, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
    headers: auth(ctx),
  });
  const items = ok('GET /api/v1/callbacks', result);
  const next = result.response.headers.get('x-next-cursor') || undefined;
  render(
    ctx,
    <CallbacksPage
      {...page(ctx)}
      status={status}
      items={items}
      next={next}
      replaySince={brasiliaLocalValue(Date.now() - 60 * 60_000)}
    />,
  );
}

/** GET /callbacks/:event_id: one event with its attempts. */
export async function callbackPage({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const eventId = ctx.params.event_id ?? '';
  if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
  const event = ok(
    'GET /api/v1/callbacks/{event_id}',
    await deps.api.GET('/api/v1/callbacks/{event_id}', {
      params: { path: { event_id: eventId } },
      headers: auth(ctx),
    }),
  );
  render(ctx, <CallbackPage {...page(ctx)} event={event} />);
}

/** POST /callbacks/replay: queues the events of a time range again. */
export async function replayCallbacks({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const form = await readForm(ctx);
  const since = brasiliaInstant(single(form.get('since')));
  if (!since) throw new BadInputError('since', text(ctx, 'callbacks.badSince'));
  const untilText = single(form.get('until'));
  const until = brasiliaInstant(untilText);
  if (untilText && !until) throw new BadInputError('until', text(ctx, 'callbacks.badUntil'));
  const answer = ok(
    'POST /api/v1/callbacks/replay',
    await deps.api.POST('/api/v1/callbacks/replay', {
      headers: { ...auth(ctx), 'Idempotency-Key': randomUUID() },
      body: { since, ...(until ? { until } : {}) },
    }),
  );
  deps.flash(ctx, 'info', text(ctx, 'callbacks.replayed', { count: answer.replayed }));
  ctx.redirect('/tenant/callbacks');
}

/** POST /callbacks/:event_id/retry: queues one event again. */
export async function retryCallback({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const eventId = ctx.params.event_id ?? '';
  if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
  ok(
    'POST /api/v1/callbacks/{event_id}/retry',
    await deps.api.POST('/api/v1/callbacks/{event_id}/retry', {
      params: { path: { event_id: eventId } },
      headers: { ...auth(ctx), 'Idempotency-Key': randomUUID() },
    }),
  );
  deps.flash(ctx, 'info', text(ctx, 'callback.queued'));
  ctx.redirect(`/tenant/callbacks/${encodeURIComponent(eventId)}`);
}

function callbackStatus(value: string | undefined): CallbackStatus | undefined {
  if (value === undefined) return undefined;
  if (!(CALLBACK_STATUSES as readonly string[]).includes(value))
    throw new BadInputError('status', `one of ${CALLBACK_STATUSES.join(', ')}, or any`);
  return value as CallbackStatus;
}
