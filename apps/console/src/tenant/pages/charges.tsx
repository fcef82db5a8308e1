/** @jsxRuntime automatic @jsxImportSource preact */
import type { components } from '@payments/sdk';
import type { Flash } from '../../http/context';
import type { TenantSession } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import { Badge, Pager, paymentTypeText } from './parts';

type SearchResultItem = components['schemas']['SearchResultItem'];
export type ChargeState = components['schemas']['SearchRequest']['state'];
export const CHARGE_STATES: readonly ChargeState[] = ['all', 'pending', 'approved', 'rejected', 'cancelled'];

/** The search's filters as typed (the same text goes back into the form, the pager and the export link). */
export interface ChargeFilters {
  state: ChargeState;
  /** Emission dates, inclusive (YYYY-MM-DD). */
  from: string;
  to: string;
  /** Part of the payer's name (any case or accent). */
  payer_name?: string;
  /** The payer's CPF or CNPJ, punctuated or not. */
  payer_tax_id?: string;
  our_number?: string;
  /** The amount as typed, e.g. `1.234,56`. */
  value?: string;
}

export interface ChargesPageProps {
  session: TenantSession;
  flash: readonly Flash[];
  path: string;
  filters: ChargeFilters;
  items: readonly SearchResultItem[];
  next?: string;
}

/** The filters as query parameters, empty ones left out: the pager's and the export's. */
export function chargeFilterParams(filters: ChargeFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (typeof v === 'string' && v !== '') params.set(k, v);
  return params;
}

/**
 * The charges search: state, emission dates, payer name, tax id, our_number and amount; the CSV of
 * every charge they select; or straight to one charge by its id.
 */
export function ChargesPage({ session, flash, path, filters, items, next }: ChargesPageProps) {
  const { t, money, civilDateTime } = useFormats();
  return (
    <Layout title={t('charges.title')} session={session} flash={flash} path={path}>
      <h1>{t('charges.title')}</h1>
      <form method="get" action="/tenant/charges" class="filters" id="charge-search">
        <label>
          {t('charges.state')}
          <select name="state">
            {CHARGE_STATES.map((s) => (
              <option value={s} selected={s === filters.state}>
                {s === 'all' ? t('charges.stateAll') : t(`state.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('charges.from')}
          <input type="date" name="from" value={filters.from} required />
        </label>
        <label>
          {t('charges.to')}
          <input type="date" name="to" value={filters.to} required />
        </label>
        <label>
          {t('charges.payerName')}
          <input
            name="payer_name"
            value={filters.payer_name ?? ''}
            minLength={3}
            maxLength={100}
            placeholder={t('charges.payerNameHint')}
          />
        </label>
        <label>
          {t('charges.taxId')}
          <input name="payer_tax_id" value={filters.payer_tax_id ?? ''} maxLength={18} inputMode="numeric" />
        </label>
        <label>
          {t('charges.ourNumber')}
          <input name="our_number" value={filters.our_number ?? ''} maxLength={40} />
        </label>
        <label>
          {t('charges.value')}
          <input name="value" value={filters.value ?? ''} inputMode="decimal" placeholder="1.234,56" size={12} />
        </label>
        <button type="submit">{t('charges.search')}</button>
      </form>
      <p class="actions">
        <a href={`/tenant/charges.csv?${chargeFilterParams(filters).toString()}`} id="charges-csv" download>
          {t('charges.exportCsv')}
        </a>
      </p>
      <form method="get" action="/tenant/charges/lookup" class="filters" id="charge-lookup">
        <label>
          {t('charges.lookupId')}
          <input name="id" size={40} placeholder="00000000-0000-0000-0000-000000000000" required />
        </label>
        <button type="submit" class="secondary">
          {t('charges.open')}
        </button>
      </form>
      {items.length === 0 ? (
        <p class="muted" id="no-charges">
          {t('charges.none')}
        </p>
      ) : (
        <table id="charges">
          <thead>
            <tr>
              <th>{t('charges.col.charge')}</th>
              <th>{t('charges.col.payer')}</th>
              <th>{t('charges.col.state')}</th>
              <th>{t('charges.col.paidWith')}</th>
              <th>{t('charges.col.paidOn')}</th>
              <th class="num">{t('charges.col.amountDue')}</th>
              <th class="num">{t('charges.col.amountPaid')}</th>
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
                <td>{paymentTypeText(t, c.paymento_type)}</td>
                {/* A São Paulo civil time without a zone: shown as written, labelled Brasília time, never shifted. */}
                <td class="paid-on">{civilDateTime(c.payment_date)}</td>
                <td class="num">{money(c.amount_due)}</td>
                <td class="num">{money(c.amount_paid)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager base="/tenant/charges" query={Object.fromEntries(chargeFilterParams(filters))} next={next} />
    </Layout>
  );
}
