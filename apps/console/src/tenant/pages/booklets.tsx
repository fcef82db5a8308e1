/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
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
  const { t } = useFormats();
  return (
    <Layout title={t('booklets.title')} session={session} flash={flash} path={path}>
      <h1>{t('booklets.title')}</h1>
      <h2>{t('booklets.request')}</h2>
      <form method="post" action="/tenant/booklets" class="stack" id="booklet-request">
        <label>
          {t('booklets.slipId')}
          <input
            name="payment_slip_id"
            value={paymentSlipId ?? ''}
            required
            placeholder="00000000-0000-0000-0000-000000000000"
          />
        </label>
        <label>
          {t('booklets.urlCallback')}
          <input
            name="url_callback"
            value={urlCallback ?? ''}
            required
            placeholder="https://erp.example.com/callbacks"
          />
        </label>
        <button type="submit">{t('booklets.submit')}</button>
      </form>
      <h2>{t('booklets.latest')}</h2>
      {events.length === 0 ? (
        <p class="muted" id="no-booklets">
          {t('booklets.none')}
        </p>
      ) : (
        <CallbackTable items={events} id="booklet-events" />
      )}
      <h2>{t('booklets.fromLink')}</h2>
      <form method="get" action="/tenant/booklets/download" class="stack" id="booklet-download">
        <label>
          {t('booklets.link')}
          <input
            name="link"
            required
            placeholder="https://.../api/v1/bank-slip-booklet/downloads/...?expires=...&signature=..."
          />
        </label>
        <button type="submit">{t('booklets.download')}</button>
        <p class="muted">{t('booklets.note')}</p>
      </form>
    </Layout>
  );
}
