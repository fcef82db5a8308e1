/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/codec';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import { Badge, Pager } from './parts';

type SearchResultItem = components['schemas']['SearchResultItem'];
export type ChargeState = components['schemas']['SearchRequest']['state'];
export const CHARGE_STATES: readonly ChargeState[] = ['all', 'pending', 'approved', 'rejected', 'cancelled'];

export interface ChargeFilters {
  state: ChargeState;
  /** Emission dates, inclusive (YYYY-MM-DD). */
  from: string;
  to: string;
}

export interface ChargesPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  filters: ChargeFilters;
  items: readonly SearchResultItem[];
  next?: string;
}

/** The charges search: state and emission dates, or straight to one charge by its id. */
export function ChargesPage({ session, flash, path, filters, items, next }: ChargesPageProps) {
  const { money, civilDateTime } = useFormats();
  return (
    <Layout title="Charges" session={session} flash={flash} path={path}>
      <h1>Charges</h1>
      <form method="get" action="/tenant/charges" class="filters" id="charge-search">
        <label>
          State
          <select name="state">
            {CHARGE_STATES.map((s) => (
              <option value={s} selected={s === filters.state}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Emitted from
          <input type="date" name="from" value={filters.from} required />
        </label>
        <label>
          to
          <input type="date" name="to" value={filters.to} required />
        </label>
        <button type="submit">Search</button>
      </form>
      <form method="get" action="/tenant/charges/lookup" class="filters" id="charge-lookup">
        <label>
          Charge id (account_receivable_id)
          <input name="id" size={40} placeholder="00000000-0000-0000-0000-000000000000" required />
        </label>
        <button type="submit" class="secondary">
          Open
        </button>
      </form>
      {items.length === 0 ? (
        <p class="muted" id="no-charges">
          No charge emitted in these dates{filters.state === 'all' ? '' : ` in state ${filters.state}`}.
        </p>
      ) : (
        <table id="charges">
          <thead>
            <tr>
              <th>Charge</th>
              <th>Payer</th>
              <th>State</th>
              <th>Paid with</th>
              <th>Paid on</th>
              <th class="num">Due</th>
              <th class="num">Paid</th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr data-charge={c.accounts_receivable_id}>
                <td class="mono">
                  <a href={`/tenant/charges/${c.accounts_receivable_id}`}>{c.accounts_receivable_id}</a>
                </td>
                <td class="payer">{c.client_name}</td>
                <td>
                  <Badge value={c.status_payment} />
                </td>
                <td>{c.paymento_type}</td>
                <td>{civilDateTime(c.payment_date)}</td>
                <td class="num">{money(c.amount_due)}</td>
                <td class="num">{money(c.amount_paid)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager base="/tenant/charges" query={{ ...filters }} next={next} />
    </Layout>
  );
}
