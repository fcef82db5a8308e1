import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import { toCents } from '@payments/br-format';
import {
  messageIds,
  PaymentMethods,
  ServiceError,
  Streams,
  type FieldError,
  type ProviderAccountVersion,
  type ReceivableCreateItem,
} from '@payments/contracts';
import { enqueue, type OutboxMessage } from '@payments/outbox';
import type { ReceivablesDatabase, ReceivablesTable } from '../db/schema';
import { BANK_INTAKE_RULES, type IntakeItem } from './bank-intake-rules';
import type { ClientDirectory, Payer } from './ports';

export interface IntakeResult {
  created: number;
  alreadyExisting: number;
}

/**
 * Records a batch of charges at once (state pending, their initial state: the history records the
 * transitions after it) with their registration jobs, in one transaction: when this returns, every charge is stored and its registration will happen. An
 * account_receivable_id the tenant already used, in any letter case, is not created, registered or
 * called back twice; the ERP's ids are kept as sent, for answers and callbacks.
 * Every client must be registered, and every new charge be one the account's bank will issue (its
 * provider kind's BANK_INTAKE_RULES at `now`); otherwise nothing is stored. Every charge is registered
 * later with the tenant's provider account as it stands now (`account`, stored in the same transaction).
 */
export async function acceptReceivables(
  db: Kysely<ReceivablesDatabase>,
  clients: ClientDirectory,
  tenantId: string,
  account: ProviderAccountVersion | undefined,
  items: ReceivableCreateItem[],
  now = new Date(),
): Promise<IntakeResult> {
  checkAccount(tenantId, account);
  const payers = await clients.find(
    tenantId,
    items.map((i) => i.client_id),
  );
  const missing: FieldError[] = items.flatMap((item, index) =>
    payers.has(item.client_id.toLowerCase())
      ? []
      : [{ path: `/${index}/client_id`, message: 'no client with this client_id is registered for this tenant' }],
  );
  if (missing.length > 0)
    throw new ServiceError(
      'validation_failed',
      'some receivables name clients that are not registered; register them first (POST /api/v1/clients)',
      missing,
    );

  const withPayers = items.flatMap((item, index) => {
    const payer = payers.get(item.client_id.toLowerCase());
    return payer ? [{ index, item, payer }] : [];
  });
  await refuseWhatTheBankWillRefuse(db, tenantId, account, withPayers, now);

  const accountId = account.account_id.toLowerCase();
  const rows = withPayers.map(({ item, payer }) => toRow(tenantId, accountId, item, payer));
  const inserted = await db.transaction().execute(async (trx) => {
    await storeAccount(trx, account);
    const created = await insertRows(trx, rows);
    await enqueue(
      trx,
      registrationJobs(
        tenantId,
        created.map((r) => r.id),
      ),
    );
    return created.length;
  });
  return { created: inserted, alreadyExisting: items.length - inserted };
}

/**
 * 422 naming `/<index>/<field>` in our field names for each new charge the account's bank will refuse.
 * An id the tenant already used is left as it is (not created again), so it is not refused either: a
 * retried batch gets the same answer for it as the first time.
 */
async function refuseWhatTheBankWillRefuse(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  account: ProviderAccountVersion,
  items: IntakeItem[],
  now: Date,
): Promise<void> {
  const errors = BANK_INTAKE_RULES[account.provider](items, now);
  if (errors.length === 0) return;
  const idAt = new Map(items.map((i) => [i.index, i.item.account_receivable_id.toLowerCase()]));
  const idOf = (path: string) => idAt.get(Number(path.split('/')[1])) ?? '';
  const stored = await db
    .selectFrom('receivables')
    .select('account_receivable_id')
    .where('tenant_id', '=', tenantId)
    .where('account_receivable_id', 'in', [...new Set(errors.map((e) => idOf(e.path)).filter((id) => id !== ''))])
    .execute();
  const existing = new Set(stored.map((r) => r.account_receivable_id));
  const refused = errors.filter((e) => !existing.has(idOf(e.path)));
  if (refused.length > 0)
    throw new ServiceError(
      'validation_failed',
      `some receivables would be refused by the bank of this tenant's ${account.provider} account; nothing was stored`,
      refused,
    );
}

/** The account must be there and be the tenant's own (the gateway sends the tenant's current one). */
function checkAccount(
  tenantId: string,
  account: ProviderAccountVersion | undefined,
): asserts account is ProviderAccountVersion {
  if (!account) throw new ServiceError('no_provider_account', `tenant ${tenantId} has no provider account`);
  if (account.tenant_id.toLowerCase() !== tenantId.toLowerCase())
    throw new ServiceError(
      'no_provider_account',
      `the provider account ${account.account_id} sent for tenant ${tenantId} belongs to another tenant`,
    );
}

/** Account versions are immutable: the first batch under a version stores it, later ones find it there. */
async function storeAccount(trx: Transaction<ReceivablesDatabase>, account: ProviderAccountVersion): Promise<void> {
  await trx
    .insertInto('provider_accounts')
    .values({
      id: account.account_id.toLowerCase(),
      tenant_id: account.tenant_id.toLowerCase(),
      provider: account.provider,
      account_key: account.account_key,
      beneficiary: JSON.stringify(account.beneficiary),
      base_url: account.base_url,
      sealed_credentials: account.sealed_credentials,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Columns written at intake, with their Postgres types (for the unnest below; bench/receivables inserts the same way). */
export const INTAKE_COLUMNS = [
  ['id', 'uuid'],
  ['tenant_id', 'uuid'],
  ['account_receivable_id', 'uuid'],
  ['client_id', 'uuid'],
  ['payment_slip_id', 'uuid'],
  ['payment_method', 'smallint'],
  ['url_callback', 'text'],
  ['emission_date', 'date'],
  ['due_date', 'date'],
  ['amount_cents', 'bigint'],
  ['discount_type', 'text'],
  ['discount_cents', 'bigint'],
  ['discount_until', 'date'],
  ['fine_bp', 'integer'],
  ['interest_cents_per_day', 'bigint'],
  ['items', 'jsonb'],
  ['payer', 'jsonb'],
  ['client_name', 'text'],
  ['state', 'text'],
  ['registration_status', 'text'],
  ['provider_account_id', 'uuid'],
  ['account_receivable_id_as_sent', 'text'],
  ['client_id_as_sent', 'text'],
  ['payment_slip_id_as_sent', 'text'],
] as const;

/**
 * One INSERT ... SELECT FROM unnest(arrays): one array parameter per column whatever the batch size,
 * instead of one per column and row (a 1,000-row VALUES list costs far more to build and to parse). Existing ids are skipped.
 */
async function insertRows(
  trx: Transaction<ReceivablesDatabase>,
  rows: Array<Insertable<ReceivablesTable>>,
): Promise<Array<{ id: string }>> {
  const arrays = INTAKE_COLUMNS.map(([column, type]) => sql`${rows.map((r) => r[column] ?? null)}::${sql.raw(type)}[]`);
  const result = await sql<{ id: string }>`
    insert into receivables (${sql.join(INTAKE_COLUMNS.map(([c]) => sql.id(c)))})
    select * from unnest(${sql.join(arrays)})
    on conflict (tenant_id, account_receivable_id) do nothing
    returning id`.execute(trx);
  return result.rows;
}

/** Registration goes in chunks: one job per REGISTRATION_CHUNK receivables, named after its first one. */
const REGISTRATION_CHUNK = 100;

function registrationJobs(tenantId: string, ids: string[]): OutboxMessage[] {
  const jobs: OutboxMessage[] = [];
  const queuedAt = new Date().toISOString();
  for (let i = 0; i < ids.length; i += REGISTRATION_CHUNK) {
    const job = { tenant_id: tenantId, receivable_ids: ids.slice(i, i + REGISTRATION_CHUNK), queued_at: queuedAt };
    jobs.push({ stream: Streams.receivableRegistrations, msgId: messageIds.registrationJob(job), payload: job });
  }
  return jobs;
}

function toRow(
  tenantId: string,
  accountId: string,
  item: ReceivableCreateItem,
  payer: Payer,
): Insertable<ReceivablesTable> {
  const hasDiscount = item.discount_type === 'ValorFixoAteDataInformada';
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    account_receivable_id: item.account_receivable_id.toLowerCase(),
    client_id: item.client_id.toLowerCase(),
    payment_slip_id: item.payment_slip_id.toLowerCase(),
    account_receivable_id_as_sent: item.account_receivable_id,
    client_id_as_sent: item.client_id,
    payment_slip_id_as_sent: item.payment_slip_id,
    payment_method: item.payment_method === PaymentMethods.pix ? PaymentMethods.pix : PaymentMethods.hybridSlip,
    url_callback: item.url_callback,
    emission_date: item.emission_date,
    due_date: item.due_date,
    amount_cents: toCents(item.value),
    discount_type: item.discount_type,
    discount_cents: hasDiscount && item.discount_value != null ? toCents(item.discount_value) : null,
    discount_until: hasDiscount ? (item.discount_date ?? null) : null,
    fine_bp: Math.round((item.fine_value ?? 0) * 100),
    interest_cents_per_day: toCents(item.interest_amount ?? 0),
    items: JSON.stringify(
      (item.items ?? []).map((line) => ({
        description: line.description,
        quantity: line.quantity,
        price_cents: toCents(line.price),
      })),
    ),
    payer: JSON.stringify(payer),
    client_name: payer.name,
    provider_account_id: accountId,
    state: 'pending',
    registration_status: 'queued',
    provider_charge_id: null,
    our_number: null,
    barcode: null,
    typeable_line: null,
    pix_copy_and_paste: null,
    qrcode_image_url: null,
    pdf_url: null,
    rejection_code: null,
    rejection_message: null,
    payment_date: null,
    amount_paid_cents: null,
    fee_cents: null,
    payment_type: 'undefined',
    cancel_requested_at: null,
    cancellation_requests: 0,
  };
}
