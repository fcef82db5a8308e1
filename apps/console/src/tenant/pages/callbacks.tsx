/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
import { Layout } from '../../views/layout';
import { CallbackTable } from './callback-table';
import { Pager } from './parts';

type CallbackEventSummary = components['schemas']['CallbackEventSummary'];
export type CallbackStatus = CallbackEventSummary['status'];
export const CALLBACK_STATUSES: readonly CallbackStatus[] = ['pending', 'delivered', 'dead'];

export interface CallbacksPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  status?: CallbackStatus;
  items: readonly CallbackEventSummary[];
  next?: string;
  /** The replay form's default `since` (a datetime-local value, UTC). */
  replaySince: string;
}

/** The tenant's callback events, newest first, by status; and the bulk replay of dead ones. */
export function CallbacksPage({ session, flash, path, status, items, next, replaySince }: CallbacksPageProps) {
  return (
    <Layout title="Callbacks" session={session} flash={flash} path={path}>
      <h1>Callbacks</h1>
      <form method="get" action="/tenant/callbacks" class="filters" id="callback-filter">
        <label>
          Status
          <select name="status">
            <option value="" selected={status === undefined}>
              any
            </option>
            {CALLBACK_STATUSES.map((s) => (
              <option value={s} selected={s === status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
      </form>
      {items.length === 0 ? (
        <p class="muted" id="no-callbacks">
          No callback{status ? ` with status ${status}` : ''}.
        </p>
      ) : (
        <CallbackTable items={items} id="callbacks" />
      )}
      <Pager base="/tenant/callbacks" query={{ status }} next={next} />
      <h2>Replay dead callbacks</h2>
      <form method="post" action="/tenant/callbacks/replay" class="filters" id="replay">
        <label>
          Dead since (UTC)
          <input type="datetime-local" name="since" value={replaySince} required />
        </label>
        <label>
          until (UTC, optional)
          <input type="datetime-local" name="until" />
        </label>
        <button type="submit">Replay every dead callback in this span</button>
      </form>
      <p class="muted">
        Each is delivered again with a fresh run of retries, under its own webhook-id; at most 30 days back.
      </p>
    </Layout>
  );
}
