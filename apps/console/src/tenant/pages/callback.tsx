/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import { Badge, Facts } from './parts';

type CallbackEventView = components['schemas']['CallbackEventView'];

export interface CallbackPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  event: CallbackEventView;
}

/** One callback event with every delivery attempt; a dead one can be sent again. */
export function CallbackPage({ session, flash, path, event }: CallbackPageProps) {
  const { t, duration, dateTime: when } = useFormats();
  return (
    <Layout title={t('callback.title', { id: event.event_id })} session={session} flash={flash} path={path}>
      <h1>
        {t('callback.heading')} <span class="mono">{event.event_id}</span>
      </h1>
      <Facts
        rows={[
          [t('callbacks.type'), event.event_type],
          [t('callbacks.status'), <Badge value={event.status} kind="callback" />],
          [t('callbacks.url'), <span class="mono">{event.url}</span>],
          [t('callbacks.created'), when(event.created_at)],
          [t('callback.delivered'), when(event.delivered_at)],
        ]}
      />
      {bookletLink(event) && (
        <div class="actions">
          <a href={`/tenant/booklets/download?event=${encodeURIComponent(event.event_id)}`} id="booklet-download">
            {t('callback.downloadBooklet')}
          </a>
        </div>
      )}
      {event.status === 'dead' && (
        <div class="actions">
          <form method="post" action={`/tenant/callbacks/${encodeURIComponent(event.event_id)}/retry`} id="retry">
            <button type="submit">{t('callback.retry')}</button>
          </form>
        </div>
      )}
      <h2>{t('callbacks.attempts')}</h2>
      {event.attempts.length === 0 ? (
        <p class="muted">{t('callback.noAttempt')}</p>
      ) : (
        <table id="attempts">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>{t('callback.when')}</th>
              <th class="num">{t('callback.statusCode')}</th>
              <th>{t('callback.error')}</th>
              <th class="num">{t('callback.duration')}</th>
              <th>{t('callback.response')}</th>
            </tr>
          </thead>
          <tbody>
            {event.attempts.map((a, i) => (
              <tr>
                <td class="num">{i + 1}</td>
                <td>{when(a.attempted_at)}</td>
                <td class="num">{a.status_code ?? t('callback.noAnswer')}</td>
                <td class="error-text">{a.error ?? ''}</td>
                <td class="num">{duration(a.duration_ms)}</td>
                <td class="response">
                  <Excerpt text={a.response_excerpt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>{t('callback.payload')}</h2>
      {event.payload === null ? (
        <p class="muted">{t('callback.notJson')}</p>
      ) : (
        <pre class="mono payload" id="payload">
          {JSON.stringify(event.payload, null, 2)}
        </pre>
      )}
    </Layout>
  );
}

/**
 * The start of the receiver's answer to an attempt: the receiver's text, so only ever a string child
 * (escaped when rendered). A long one scrolls inside a box of a few lines. Absent on the answers of an
 * older gateway: said as none, like null.
 */
function Excerpt({ text }: { text: string | null | undefined }) {
  if (!text) return <span class="muted">—</span>;
  return <pre class="mono excerpt">{text}</pre>;
}

/** The signed download link of a booklet.sent event's payload, when it has one. */
export function bookletLink(event: Pick<CallbackEventView, 'event_type' | 'payload'>): string | undefined {
  const download = event.event_type === 'booklet.sent' ? event.payload?.download : undefined;
  return typeof download === 'string' ? download : undefined;
}
