/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
import { Layout } from '../../views/layout';
import { CallbackTable } from './callback-table';

export interface BookletsPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  /** Prefilled fields (from a charge page's link). */
  paymentSlipId?: string;
  urlCallback?: string;
  /** The tenant's latest booklet events (booklet.sent carries the download link). */
  events: readonly components['schemas']['CallbackEventSummary'][];
}

/**
 * Booklets: request one; once built, its booklet.sent event (listed here) carries the signed download
 * link, and the event's page downloads the PDF through the console. A link received by the ERP can be
 * pasted too.
 */
export function BookletsPage({ session, flash, path, paymentSlipId, urlCallback, events }: BookletsPageProps) {
  return (
    <Layout title="Booklets" session={session} flash={flash} path={path}>
      <h1>Booklets</h1>
      <h2>Request a booklet</h2>
      <form method="post" action="/tenant/booklets" class="stack" id="booklet-request">
        <label>
          Booklet id (the charges' payment_slip_id)
          <input
            name="payment_slip_id"
            value={paymentSlipId ?? ''}
            required
            placeholder="00000000-0000-0000-0000-000000000000"
          />
        </label>
        <label>
          Send the booklet.sent callback (with the download link) to
          <input
            name="url_callback"
            value={urlCallback ?? ''}
            required
            placeholder="https://erp.example.com/callbacks"
          />
        </label>
        <button type="submit">Request booklet</button>
      </form>
      <h2>Latest booklets</h2>
      {events.length === 0 ? (
        <p class="muted" id="no-booklets">
          No booklet event among the latest callbacks.
        </p>
      ) : (
        <CallbackTable items={events} id="booklet-events" />
      )}
      <h2>Download a booklet from its link</h2>
      <form method="get" action="/tenant/booklets/download" class="stack" id="booklet-download">
        <label>
          The download link of the booklet.sent callback
          <input
            name="link"
            required
            placeholder="https://.../api/v1/bank-slip-booklet/downloads/...?expires=...&signature=..."
          />
        </label>
        <button type="submit">Download PDF</button>
        <p class="muted">
          The console fetches the PDF from the gateway and passes it on; the link must be this gateway's.
        </p>
      </form>
    </Layout>
  );
}
