/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import { CallbackTable } from './callback-table';
import { Badge, Facts } from './parts';

type Schemas = components['schemas'];

export interface ChargePageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  charge: Schemas['ConsultResult'];
  history: readonly Schemas['ReceivableHistoryEntry'][];
  callbacks: readonly Schemas['CallbackEventSummary'][];
}

/** One charge: its payment data, every change of state, and the callbacks sent about it. */
export function ChargePage({ session, flash, path, charge, history, callbacks }: ChargePageProps) {
  const { money, dateTime: when, civilDateTime } = useFormats();
  const callbackUrl = callbacks.find((c) => c.url)?.url;
  return (
    <Layout title={`Charge ${charge.accounts_receivable_id}`} session={session} flash={flash} path={path}>
      <h1>
        Charge <span class="mono">{charge.accounts_receivable_id}</span>
      </h1>
      <Facts
        rows={[
          ['Payer', <span id="payer-name">{charge.client_name}</span>],
          ['State', <Badge value={charge.status_payment} />],
          ['Paid with', charge.payment_type],
          ['Paid on', civilDateTime(charge.payment_date)],
          ['Amount due', money(charge.amount_due)],
          ['Amount paid', money(charge.amount_paid)],
          ['Fee', money(charge.fee_amount)],
        ]}
      />
      <h2>State history</h2>
      <table id="history">
        <thead>
          <tr>
            <th>When</th>
            <th>From</th>
            <th>To</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr>
              <td>{when(h.at)}</td>
              <td>{h.from_state ?? '—'}</td>
              <td>
                <Badge value={h.to_state} />
              </td>
              <td>{h.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Callbacks</h2>
      {callbacks.length === 0 ? (
        <p class="muted">No callback about this charge yet.</p>
      ) : (
        <CallbackTable items={callbacks} id="charge-callbacks" />
      )}
      <h2>Booklet</h2>
      <p>
        <a
          href={`/tenant/booklets?${new URLSearchParams(callbackUrl ? { url_callback: callbackUrl } : {}).toString()}`}
          id="booklet-link"
        >
          Request or download this charge's booklet
        </a>
      </p>
    </Layout>
  );
}
