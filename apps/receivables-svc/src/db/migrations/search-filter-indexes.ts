import type { OnlineIndex } from '@payments/db';

/*
 * The indexes of the search's optional filters (docs/api.md, "Search"), built concurrently after the
 * migrations; 0018_search_filters.ts adds what they need to exist (search_fold, pg_trgm).
 */

/**
 * The payer's tax id as the index and the query compare it: without punctuation, upper case (an
 * alphanumeric CNPJ), as @payments/tax-id taxIdDigits writes it. The query must repeat this text
 * exactly for Postgres to use the index.
 */
export const PAYER_TAX_ID_SQL = `upper(regexp_replace(payer->>'taxId', '[.\\s/-]', '', 'g'))`;

/** The filters' indexes; each leads with tenant_id where it can, as every search names its tenant. */
export const searchFilterIndexes: OnlineIndex[] = [
  // Payer name: a substring in any case and accent, through trigrams of the folded name (all tenants:
  // a GIN index takes no leading tenant column without btree_gin; the tenant and dates filter after).
  {
    name: 'receivables_payer_name_trgm_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_payer_name_trgm_idx on receivables
      using gin (search_fold(client_name) public.gin_trgm_ops)`,
  },
  // Payer tax id, then the search's own order, so a page is read in order off the index.
  {
    name: 'receivables_payer_tax_id_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_payer_tax_id_idx on receivables
      (tenant_id, (${PAYER_TAX_ID_SQL}), emission_date, account_receivable_id)`,
  },
  {
    name: 'receivables_tenant_our_number_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_tenant_our_number_idx on receivables
      (tenant_id, our_number) where our_number is not null`,
  },
  {
    name: 'receivables_amount_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_amount_idx on receivables
      (tenant_id, amount_cents, emission_date, account_receivable_id)`,
  },
];
