import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type Kysely } from 'kysely';
import { toCents } from '@payments/br-format';
import {
  messageIds,
  PaymentMethods,
  ServiceError,
  Streams,
  type FieldError,
  type ProviderAccountVersion,
  type ReceivableCreateItem,
  type RegistrationJob,
} from '@payments/contracts';
import { enqueueStatement, type OutboxMessage } from '@payments/outbox';
import type { ReceivablesDatabase, ReceivablesTable } from '../db/schema';
import { BANK_INTAKE_RULES, paymentMethodRefusal, type IntakeItem } from './bank-intake-rules';
import type { ClientDirectory, Payer } from './ports';

export interface IntakeResult {
  created: number;
  alreadyExisting: number;
  /** The ids of the charges that already existed, in batch order, spelled as the ERP sent them first. */
  existing: string[];
}

/** One create request: a tenant's charges, under the provider account the gateway sent with them. */
export interface IntakeRequest {
  tenantId: string;
  account: ProviderAccountVersion | undefined;
  items: ReceivableCreateItem[];
}

/** What one request of a batch came to: its own counts, or the error that is its alone. */
export type IntakeOutcome = { ok: true; value: IntakeResult } | { ok: false; error: unknown };

/**
 * Records a batch of charges at once (state pending, their initial state: the history records the
 * transitions after it) with their registration jobs, in one transaction: when this returns, every
 * charge is stored and its registration will happen. An account_receivable_id the tenant already used,
 * in any letter case, is not created, registered or called back twice; the ERP's ids are kept as sent,
 * for answers and callbacks.
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
  const [outcome] = await acceptRequests(db, clients, [{ tenantId, account, items }], now);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * Accepts many create requests, of any tenants, as acceptReceivables accepts each, but stores them all
 * in one transaction: one commit serves every request, and registration jobs are chunks of the tenant's
 * charges across the requests, so a stream of one-charge requests is registered in batches all the same.
 * Each request is answered alone, in order: one refused (no account, an unregistered client, a charge its
 * bank will refuse) stores nothing of its own and fails with its own error while the others go on. An
 * id sent twice, by two requests or within one, is created for the first and already exists for the next.
 * The clients are asked once per tenant, for every client its requests name.
 */
export async function acceptRequests(
  db: Kysely<ReceivablesDatabase>,
  clients: ClientDirectory,
  requests: readonly IntakeRequest[],
  now = new Date(),
): Promise<IntakeOutcome[]> {
  const outcomes: Array<IntakeOutcome | undefined> = requests.map(() => undefined);
  const fail = (index: number, error: unknown) => (outcomes[index] = { ok: false, error });
  const checked = requests.flatMap((request, index) => {
    try {
      checkAccount(request.tenantId, request.account);
      return [{ index, request, account: request.account }];
    } catch (error) {
      fail(index, error);
      return [];
    }
  });

  const payersOf = lookUpPerTenant(
    clients,
    checked.map((c) => c.request),
  );
  const ready = await Promise.all(
    checked.map(async ({ index, request, account }): Promise<Accepted | undefined> => {
      try {
        const payers = await payersOf(request.tenantId);
        const withPayers = payersFor(request.items, payers);
        await refuseWhatTheBankWillRefuse(db, request.tenantId, account, withPayers, now);
        const accountId = account.account_id.toLowerCase();
        return {
          index,
          account,
          rows: withPayers.map(({ item, payer }) => toRow(request.tenantId, accountId, item, payer)),
        };
      } catch (error) {
        fail(index, error);
        return undefined;
      }
    }),
  );
  const accepted = ready.filter((a): a is Accepted => a !== undefined);

  const stored = await storeEachOrAlone(db, accepted);
  await Promise.all(
    stored.map(async (result, k) => {
      const { index } = accepted[k];
      if (!result.ok) return fail(index, result.error);
      try {
        const existing = await spelledAsFirstSent(db, requests[index].tenantId, result.value.existingKeys);
        outcomes[index] = {
          ok: true,
          value: { created: result.value.created, alreadyExisting: existing.length, existing },
        };
      } catch (error) {
        fail(index, error);
      }
    }),
  );
  return outcomes.map((o) => o ?? { ok: false, error: new Error('a create request of the batch was left unanswered') });
}

/**
 * The ERP's ids of charges that already existed, as it spelled them when it created them (the
 * create's 202 names them so, docs/api.md): their stored spelling, which the rows this request sent
 * may not share. Committed already, so read after the insert; in the order of `keys`.
 */
async function spelledAsFirstSent(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  keys: readonly string[],
): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await db
    .selectFrom('receivables')
    .select(['account_receivable_id', 'account_receivable_id_as_sent'])
    .where('tenant_id', '=', tenantId)
    .where('account_receivable_id', 'in', [...new Set(keys)])
    .execute();
  const asSent = new Map(rows.map((r) => [r.account_receivable_id, r.account_receivable_id_as_sent]));
  return keys.map((key) => asSent.get(key) ?? key);
}

/** What storing a request came to: how many charges it created, and the ids (as keys) it found stored. */
interface Stored {
  created: number;
  existingKeys: string[];
}

/** A request that passed every check: its account, and its rows ready to insert. */
interface Accepted {
  index: number;
  account: ProviderAccountVersion;
  rows: IntakeRow[];
}

/** A charge as intake writes it: every column, and the keys this module reads back as strings. */
type IntakeRow = Insertable<ReceivablesTable> & { id: string; tenant_id: string; account_receivable_id: string };

/**
 * One clients lookup per tenant, for every client id its requests name, all at once. A tenant's lookup
 * that fails fails that tenant's requests only.
 */
function lookUpPerTenant(
  clients: ClientDirectory,
  requests: readonly IntakeRequest[],
): (tenantId: string) => Promise<Map<string, Payer>> {
  const idsPerTenant = new Map<string, { tenantId: string; clientIds: Set<string> }>();
  for (const r of requests) {
    const key = r.tenantId.toLowerCase();
    const entry = idsPerTenant.get(key) ?? { tenantId: r.tenantId, clientIds: new Set<string>() };
    for (const item of r.items) entry.clientIds.add(item.client_id);
    idsPerTenant.set(key, entry);
  }
  const lookups = new Map(
    [...idsPerTenant].map(([key, { tenantId, clientIds }]) => {
      const found = clients.find(tenantId, [...clientIds]);
      found.catch(() => undefined); // answered through the requests that await it
      return [key, found] as const;
    }),
  );
  return (tenantId) => lookups.get(tenantId.toLowerCase()) ?? Promise.resolve(new Map<string, Payer>());
}

/** Each item with its payer, or 422 naming `/<index>/client_id` for each client not registered. */
function payersFor(items: readonly ReceivableCreateItem[], payers: Map<string, Payer>): IntakeItem[] {
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
  return items.flatMap((item, index) => {
    const payer = payers.get(item.client_id.toLowerCase());
    return payer ? [{ index, item, payer }] : [];
  });
}

/**
 * The requests in one transaction; should it fail with several in it (a value Postgres refuses in one of
 * them, say), each is stored again alone, so that only the request at fault fails.
 */
async function storeEachOrAlone(
  db: Kysely<ReceivablesDatabase>,
  accepted: readonly Accepted[],
): Promise<Array<{ ok: true; value: Stored } | { ok: false; error: unknown }>> {
  if (accepted.length === 0) return [];
  try {
    return (await storeTogether(db, accepted)).map((stored) => ({ ok: true, value: stored }));
  } catch (error) {
    if (accepted.length === 1) return [{ ok: false, error }];
    return Promise.all(
      accepted.map((a) =>
        storeTogether(db, [a]).then(
          ([stored]) => ({ ok: true as const, value: stored }),
          (err: unknown) => ({ ok: false as const, error: err }),
        ),
      ),
    );
  }
}

/**
 * One statement, so one transaction, for the requests: their accounts, all their rows and the
 * registration jobs of what was created; answers how many of each request's charges were created, and
 * the keys of those it found stored already. Rows go in in the order
 * they were sent (requests, then items), the order registration takes them in: of one id sent twice in a
 * batch the first is inserted (ON CONFLICT DO NOTHING skips a row that conflicts with one the same
 * statement inserted before it). Two batches that insert the same ids in opposite orders may deadlock;
 * Postgres then fails one, whose requests are stored again alone (storeEachOrAlone).
 */
async function storeTogether(db: Kysely<ReceivablesDatabase>, accepted: readonly Accepted[]): Promise<Stored[]> {
  const rows = accepted.flatMap((a) => a.rows);
  const accounts = [...new Map(accepted.map((a) => [a.account.account_id.toLowerCase(), a.account])).values()];
  const created = new Set((await insertRows(db, accounts, rows)).map(({ id }) => id));
  return accepted.map((a) => {
    const existing = a.rows.filter((row) => !created.has(row.id));
    return {
      created: a.rows.length - existing.length,
      existingKeys: existing.map((row) => row.account_receivable_id),
    };
  });
}

/**
 * 422 naming `/<index>/<field>` in our field names for each new charge the account's bank will refuse:
 * a kind of charge the account cannot issue at all first (pix_key_required, slip_not_supported, naming
 * `/<index>/payment_method`), then what its bank refuses of a charge it issues (validation_failed).
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
  const method = paymentMethodRefusal(account, items);
  const refusals = [
    ...(method ? [method] : []),
    {
      code: 'validation_failed' as const,
      message: `some receivables would be refused by the bank of this tenant's ${account.provider} account; nothing was stored`,
      errors: BANK_INTAKE_RULES[account.provider](items, now),
    },
  ];
  const named = refusals.flatMap((r) => r.errors);
  if (named.length === 0) return;
  const idAt = new Map(items.map((i) => [i.index, i.item.account_receivable_id.toLowerCase()]));
  const idOf = (path: string) => idAt.get(Number(path.split('/')[1])) ?? '';
  const stored = await db
    .selectFrom('receivables')
    .select('account_receivable_id')
    .where('tenant_id', '=', tenantId)
    .where('account_receivable_id', 'in', [...new Set(named.map((e) => idOf(e.path)).filter((id) => id !== ''))])
    .execute();
  const existing = new Set(stored.map((r) => r.account_receivable_id));
  for (const refusal of refusals) {
    const refused = refusal.errors.filter((e) => !existing.has(idOf(e.path)));
    if (refused.length > 0) throw new ServiceError(refusal.code, refusal.message, refused);
  }
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

/**
 * Account versions are immutable: the first batch under a version stores it, later ones find it there.
 * Written by the statement that inserts the charges (insertRows), a round trip less per transaction;
 * the charges' reference to it is checked at the end of that statement, when both are in.
 */
function accountsInsert(accounts: readonly ProviderAccountVersion[]) {
  const values = accounts.map(
    (a) =>
      sql`(${a.account_id.toLowerCase()}::uuid, ${a.tenant_id.toLowerCase()}::uuid, ${a.provider}, ${a.account_key},
        ${JSON.stringify(a.beneficiary)}::jsonb, ${a.base_url}, ${a.sealed_credentials})`,
  );
  return sql`insert into provider_accounts (id, tenant_id, provider, account_key, beneficiary, base_url, sealed_credentials)
    values ${sql.join(values)}
    on conflict (id) do nothing`;
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
 * instead of one per column and row (a 1,000-row VALUES list costs far more to build and to parse).
 * Existing ids are skipped; unnest yields the rows in the arrays' order, the order they are inserted in.
 * The accounts the rows name, and the registration jobs of the rows it inserts, go in by the same
 * statement: a job is stored when one of its charges was inserted (registrationJobs).
 */
async function insertRows(
  db: Kysely<ReceivablesDatabase>,
  accounts: readonly ProviderAccountVersion[],
  rows: readonly IntakeRow[],
): Promise<Array<{ id: string }>> {
  const arrays = INTAKE_COLUMNS.map(([column, type]) => sql`${rows.map((r) => r[column] ?? null)}::${sql.raw(type)}[]`);
  const jobs = registrationJobs(rows);
  const result = await sql<{ id: string }>`
    with accounts as (${accountsInsert(accounts)}),
    inserted as (
      insert into receivables (${sql.join(INTAKE_COLUMNS.map(([c]) => sql.id(c)))})
      select * from unnest(${sql.join(arrays)})
      on conflict (tenant_id, account_receivable_id) do nothing
      returning id
    ),
    jobs as (${enqueueStatement(
      jobs.map((j) => j.message),
      { keys: jobs.map((j) => j.ids), among: sql`select id from inserted`, keysField: JOB_IDS_FIELD },
    )})
    select id from inserted`.execute(db);
  return result.rows;
}

/**
 * Registration goes in chunks of each tenant's new charges: one job per REGISTRATION_CHUNK receivables
 * of one tenant, named after its first one.
 */
const REGISTRATION_CHUNK = 100;

/** Where a registration job lists its receivables: the insert keeps there only the ones it wrote. */
const JOB_IDS_FIELD = 'receivable_ids' satisfies keyof RegistrationJob;

/**
 * The registration jobs of the rows, made before the insert knows which it skips (an id the tenant
 * used before): the insert stores a job only when it wrote one of its rows, naming only those it wrote
 * (its message id stays the one its first row gave it).
 */
function registrationJobs(rows: readonly IntakeRow[]): Array<{ message: OutboxMessage; ids: string[] }> {
  const idsPerTenant = new Map<string, { tenantId: string; ids: string[] }>();
  for (const row of rows) {
    const key = row.tenant_id.toLowerCase();
    const entry = idsPerTenant.get(key) ?? { tenantId: row.tenant_id, ids: [] };
    entry.ids.push(row.id);
    idsPerTenant.set(key, entry);
  }
  const jobs: Array<{ message: OutboxMessage; ids: string[] }> = [];
  const queuedAt = new Date().toISOString();
  for (const { tenantId, ids } of idsPerTenant.values())
    for (let i = 0; i < ids.length; i += REGISTRATION_CHUNK) {
      const job = { tenant_id: tenantId, receivable_ids: ids.slice(i, i + REGISTRATION_CHUNK), queued_at: queuedAt };
      jobs.push({
        message: { stream: Streams.receivableRegistrations, msgId: messageIds.registrationJob(job), payload: job },
        ids: job.receivable_ids,
      });
    }
  return jobs;
}

function toRow(tenantId: string, accountId: string, item: ReceivableCreateItem, payer: Payer): IntakeRow {
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
