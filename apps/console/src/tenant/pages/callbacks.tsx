/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
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
  /** The replay form's default `since` (a datetime-local value, Brasília time). */
  replaySince: string;
}

/** The tenant's callback events, newest first, by status; and the bulk replay of dead ones. */
export function CallbacksPage({ session, flash, path, status, items, next, replaySince }: CallbacksPageProps) {
  const { t } = useFormats();
  return (
    <Layout title={t('callbacks.title')} session={session} flash={flash} path={path}>
      <h1>{t('callbacks.title')}</h1>
      <form method="get" action="/tenant/callbacks" class="filters" id="callback-filter">
        <label>
          {t('callbacks.status')}
          <select name="status">
            <option value="" selected={status === undefined}>
              {t('callbacks.any')}
            </option>
            {CALLBACK_STATUSES.map((s) => (
              <option value={s} selected={s === status}>
                {t(`callbackStatus.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t('callbacks.show')}</button>
      </form>
      {items.length === 0 ? (
        <p class="muted" id="no-callbacks">
          {status ? t('callbacks.noneWithStatus', { status: t(`callbackStatus.${status}`) }) : t('callbacks.none')}
        </p>
      ) : (
        <CallbackTable items={items} id="callbacks" />
      )}
      <Pager base="/tenant/callbacks" query={{ status }} next={next} />
      <h2>{t('callbacks.replay')}</h2>
      <form method="post" action="/tenant/callbacks/replay" class="filters" id="replay">
        <label>
          {t('callbacks.deadSince')}
          <input type="datetime-local" name="since" value={replaySince} required />
        </label>
        <label>
          {t('callbacks.until')}
          <input type="datetime-local" name="until" />
        </label>
        <button type="submit">{t('callbacks.replaySubmit')}</button>
      </form>
      <p class="muted">{t('callbacks.replayNote')}</p>
    </Layout>
  );
}
