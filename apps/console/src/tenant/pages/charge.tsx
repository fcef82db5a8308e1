/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { components } from '@payments/sdk';
import { formatTypeableLine } from '@payments/br-format';
import { formatTaxId } from '@payments/tax-id';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats, type Formats } from '../../views/locale';
import { CallbackTable } from './callback-table';
import { Badge, Facts, paymentTypeText } from './parts';

type Schemas = components['schemas'];
/** A fact: label, value, and the id of its value (for tests and links). */
type Row = [string, ComponentChildren, string];

/** How the page offers the slip PDF or the QR image: through the console, at the bank, or not at all. */
export type SlipOffer = { via: 'console'; href: string } | { via: 'bank'; href: string } | undefined;

export interface ChargePageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  charge: Schemas['ConsultResult'];
  /** GET .../payment-data; undefined while the bank has not registered the charge (the API's 404). */
  paymentData: Schemas['PaymentData'] | undefined;
  /** YYYY-MM-DD, as the charge was issued (GET /api/v1/accounts-receivable/{uuid}). */
  dueDate?: string;
  /** The payer's CPF or CNPJ, when known. */
  payerTaxId?: string;
  pdf: SlipOffer;
  qrCode: SlipOffer;
  history: readonly Schemas['ReceivableHistoryEntry'][];
  callbacks: readonly Schemas['CallbackEventSummary'][];
}

/**
 * One charge, as support is asked about it on the phone (docs/console.md): who pays what and when,
 * the payment data to read out or send (typeable line, barcode, PIX copy-and-paste and its QR code,
 * the PDF), whether and when it was paid, every change of state, and the callbacks sent about it.
 */
export function ChargePage(props: ChargePageProps) {
  const { session, flash, path, charge, history, callbacks } = props;
  const { t } = useFormats();
  const callbackUrl = callbacks.find((c) => c.url)?.url;
  return (
    <Layout
      title={t('charge.title', { id: charge.accounts_receivable_id })}
      session={session}
      flash={flash}
      path={path}
    >
      <h1>
        {t('charge.heading')} <span class="mono">{charge.accounts_receivable_id}</span>
      </h1>
      <Facts rows={summaryRows(props, useFormats())} />
      <h2>{t('charge.paymentData')}</h2>
      <PaymentDataFacts {...props} />
      <h2>{t('charge.payment')}</h2>
      <Payment charge={charge} />
      <h2>{t('charge.history')}</h2>
      <History history={history} />
      <h2>{t('charge.callbacks')}</h2>
      {callbacks.length === 0 ? (
        <p class="muted">{t('charge.noCallbacks')}</p>
      ) : (
        <CallbackTable items={callbacks} id="charge-callbacks" />
      )}
      <h2>{t('charge.booklet')}</h2>
      <p>
        <a
          href={`/tenant/booklets?${new URLSearchParams(callbackUrl ? { url_callback: callbackUrl } : {}).toString()}`}
          id="booklet-link"
        >
          {t('charge.bookletLink')}
        </a>
      </p>
    </Layout>
  );
}

/** The registered payment data, or that the bank has not registered it yet. */
function PaymentDataFacts(props: Pick<ChargePageProps, 'charge' | 'paymentData' | 'pdf' | 'qrCode'>) {
  const { charge, paymentData: data, pdf, qrCode } = props;
  const { t } = useFormats();
  // No payment data: the API's 404 until the bank registers it, and for good once refused or cancelled first.
  if (!data && charge.status_payment === 'Rejeitada')
    return (
      <p class="muted" id="not-registered">
        {t('charge.refusedByBank')}
      </p>
    );
  if (!data && charge.status_payment === 'Cancelada')
    return (
      <p class="muted" id="not-registered">
        {t('charge.cancelledUnregistered')}
      </p>
    );
  if (!data)
    return (
      <p class="muted" id="awaiting-registration">
        {t('charge.awaitingRegistration')}
      </p>
    );
  const slip = data.typeable_line !== '';
  const rows: Row[] = [
    [t('charge.ourNumber'), <span class="mono">{data.our_number}</span>, 'our-number'],
    [
      t('charge.typeableLine'),
      slip ? <span class="mono">{readableLine(data.typeable_line)}</span> : t('charge.noSlip'),
      'typeable-line',
    ],
    [t('charge.barcode'), slip ? <span class="mono">{data.barcode}</span> : t('charge.noSlip'), 'barcode'],
    [
      t('charge.pixCopyPaste'),
      data.pix_copy_and_paste ? (
        // Read-only: one click and Ctrl+A selects the whole code to paste into a chat or an e-mail.
        <textarea
          class="mono pix"
          readOnly
          rows={3}
          cols={60}
          aria-label={t('charge.pixCopyPaste')}
          value={data.pix_copy_and_paste}
        />
      ) : (
        t('charge.noPix')
      ),
      'pix-copy-and-paste',
    ],
  ];
  if (qrCode)
    rows.push([
      t('charge.qrCode'),
      qrCode.via === 'console' ? (
        <img src={qrCode.href} alt={t('charge.qrCodeAlt')} width={200} height={200} id="qr-code" />
      ) : (
        <a href={qrCode.href} rel="noopener noreferrer" id="qr-code-link">
          {t('charge.qrCodeAtBank')}
        </a>
      ),
      'qr',
    ]);
  if (pdf)
    rows.push([
      t('charge.pdf'),
      pdf.via === 'console' ? (
        <a href={pdf.href} id="slip-pdf">
          {t('charge.pdfDownload')}
        </a>
      ) : (
        <a href={pdf.href} rel="noopener noreferrer" id="slip-pdf">
          {t('charge.pdfAtBank')}
        </a>
      ),
      'pdf',
    ]);
  return <Facts rows={rows} />;
}

/** State, payer (and tax id), due date and amount: the first things asked. */
function summaryRows(props: ChargePageProps, { t, money, date }: Formats): Row[] {
  const { charge, payerTaxId, dueDate } = props;
  const rows: Row[] = [
    [t('charge.state'), <Badge value={charge.status_payment} />, 'charge-state'],
    [t('charge.payer'), charge.client_name, 'payer-name'],
  ];
  if (payerTaxId) rows.push([t('charge.taxId'), formatTaxId(payerTaxId), 'payer-tax-id']);
  if (dueDate) rows.push([t('charge.dueDate'), date(dueDate), 'due-date']);
  rows.push([t('charge.amount'), money(charge.amount_due), 'amount-due']);
  return rows;
}

/** A 47-digit typeable line in the groups printed on the slip (what the payer reads back); else as given. */
function readableLine(line: string): string {
  return /^\d{47}$/.test(line) ? formatTypeableLine(line) : line;
}

/** When and how it was paid: payment_date is São Paulo civil time (docs/api.md), shown unshifted. */
function Payment({ charge }: { charge: Schemas['ConsultResult'] }) {
  const { t, money, civilDateTime } = useFormats();
  if (!charge.payment_date)
    return (
      <p class="muted" id="not-paid">
        {t('charge.notPaid')}
      </p>
    );
  return (
    <Facts
      rows={[
        [t('charge.paidOn'), civilDateTime(charge.payment_date), 'paid-on'],
        [t('charge.paidWith'), paymentTypeText(t, charge.payment_type), 'paid-with'],
        [t('charge.amountPaid'), money(charge.amount_paid), 'amount-paid'],
        [t('charge.fee'), money(charge.fee_amount), 'fee'],
      ]}
    />
  );
}

function History({ history }: { history: readonly Schemas['ReceivableHistoryEntry'][] }) {
  const { t, dateTime } = useFormats();
  return (
    <table id="history">
      <thead>
        <tr>
          <th>{t('charge.history.when')}</th>
          <th>{t('charge.history.from')}</th>
          <th>{t('charge.history.to')}</th>
          <th>{t('charge.history.why')}</th>
        </tr>
      </thead>
      <tbody>
        {history.map((h) => (
          <tr>
            <td>{dateTime(h.at)}</td>
            <td>{h.from_state ? <Badge value={h.from_state} /> : '—'}</td>
            <td>
              <Badge value={h.to_state} />
            </td>
            <td>{h.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
