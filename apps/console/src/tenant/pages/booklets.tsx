/** @jsxRuntime automatic @jsxImportSource preact */
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
import { Layout } from '../../views/layout';

export interface BookletsPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  /** Prefilled fields (from a charge page's link). */
  paymentSlipId?: string;
  urlCallback?: string;
}

/**
 * Booklets: request one (its signed download link travels in the booklet.sent callback, to the
 * ERP's URL: the public API hands it to no one else), and download one through the console from
 * that link.
 */
export function BookletsPage({ session, flash, path, paymentSlipId, urlCallback }: BookletsPageProps) {
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
      <h2>Download a booklet</h2>
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
