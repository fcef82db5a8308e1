/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
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
  const { duration, dateTime: when } = useFormats();
  return (
    <Layout title={`Callback ${event.event_id}`} session={session} flash={flash} path={path}>
      <h1>
        Callback <span class="mono">{event.event_id}</span>
      </h1>
      <Facts
        rows={[
          ['Type', event.event_type],
          ['Status', <Badge value={event.status} />],
          ['URL', <span class="mono">{event.url}</span>],
          ['Created', when(event.created_at)],
          ['Delivered', event.delivered_at ? when(event.delivered_at) : '—'],
        ]}
      />
      {bookletLink(event) && (
        <div class="actions">
          <a href={`/tenant/booklets/download?event=${encodeURIComponent(event.event_id)}`} id="booklet-download">
            Download the booklet PDF
          </a>
        </div>
      )}
      {event.status === 'dead' && (
        <div class="actions">
          <form method="post" action={`/tenant/callbacks/${encodeURIComponent(event.event_id)}/retry`} id="retry">
            <button type="submit">Retry delivery</button>
          </form>
        </div>
      )}
      <h2>Attempts</h2>
      {event.attempts.length === 0 ? (
        <p class="muted">No attempt yet.</p>
      ) : (
        <table id="attempts">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>When</th>
              <th class="num">Status code</th>
              <th>Error</th>
              <th class="num">Duration</th>
              <th>Response</th>
            </tr>
          </thead>
          <tbody>
            {event.attempts.map((a, i) => (
              <tr>
                <td class="num">{i + 1}</td>
                <td>{when(a.attempted_at)}</td>
                <td class="num">{a.status_code ?? 'no answer'}</td>
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
      <h2>Payload</h2>
      {event.payload === null ? (
        <p class="muted">Not a JSON object.</p>
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
