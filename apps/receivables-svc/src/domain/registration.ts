import { formatBrazilianDate, formatPercent, formatReais } from '@payments/br-format';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from '@payments/logger';
import {
  messageIds,
  Streams,
  type CallbackRequest,
  type CancellationJob,
  type JobOutcome,
  type ProviderKind,
  type RegistrationJob,
} from '@payments/contracts';
import { enqueue, enqueueStatement, type OutboxMessage } from '@payments/outbox';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import {
  callbackMessages,
  registeredCallback,
  registrationFailedCallback,
  type RegisteredRow,
} from './callback-messages';
import { backoff } from './job-outcome';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type ChargeRequest,
  type Payer,
  type PaymentProviders,
  type ProviderAccount,
  type ProviderAccounts,
  type ProviderCharge,
  type RegistrationOutcome,
  type SlipLinks,
} from './ports';
import { recordTransition } from './state-history';

export interface RegistrationDeps {
  db: Kysely<ReceivablesDatabase>;
  /** The adapters by provider kind: each group of charges goes to its account's kind. */
  providers: PaymentProviders;
  accounts: ProviderAccounts;
  slipLinks: SlipLinks;
  logger: Logger;
  /** Told about registrations once they are committed (metrics); optional. */
  observer?: RegistrationObserver;
  /** Test hook: called inside the results transaction, after its writes and before its commit (interleaving tests). */
  beforeResultsCommit?: () => Promise<void>;
}

/** A port for whoever watches registrations (e.g. a latency histogram): the domain knows no metrics library. */
export interface RegistrationObserver {
  /** A receivable created at `createdAt` was registered with the provider at `registeredAt`. */
  registered(createdAt: Date, registeredAt: Date): void;
}

/** What registering a receivable reads: its charge terms and where it stands. */
const REGISTRATION_COLUMNS = [
  'id',
  'tenant_id',
  'url_callback',
  'account_receivable_id',
  'account_receivable_id_as_sent',
  'provider_account_id',
  'provider_charge_id',
  'state',
  'registration_status',
  'payment_method',
  'amount_cents',
  'emission_date',
  'due_date',
  'payer',
  'items',
  'discount_cents',
  'discount_until',
  'fine_bp',
  'interest_cents_per_day',
] as const;
type RegistrationRow = Pick<ReceivableRow, (typeof REGISTRATION_COLUMNS)[number]>;

type Attempt = { row: RegistrationRow; outcome: RegistrationOutcome };

/**
 * Registers a job's receivables with the provider of the account each was accepted under (one batch
 * call per account) and records the results with their callbacks in one transaction. Safe to run twice for the same job (a redelivery after a crash): the
 * provider is idempotent on our receivable ids, and a result is written only while its receivable is
 * still queued. When the provider cannot take some of them now, the job is retried later (the ones
 * already registered are skipped then).
 */
export async function registerReceivables(
  deps: RegistrationDeps,
  job: RegistrationJob,
  deliveryCount: number,
): Promise<JobOutcome> {
  const { rows, marks } = await readAndMark(deps, job);
  const queued = rows.filter((r) => r.registration_status === 'queued');
  const toSkip = queued.filter((r) => r.state === 'cancelled'); // cancelled before it reached the provider
  const toRegister = queued.filter((r) => r.state !== 'cancelled');

  const attempts: Attempt[] = [];
  const pendingCharges: PendingCharge[] = [];
  let unavailable = 0;
  // A job holds one intake batch, so almost always one account; legacy rows (no account) form their own group.
  for (const group of groupByAccount(toRegister)) {
    const account = await deps.accounts.forReceivable(group[0].provider_account_id);
    const outcomes = await registerGroup(deps, account, group, marks, deliveryCount);
    group.forEach((row, i) => {
      const outcome = outcomes[i];
      if (outcome.kind !== 'unavailable') attempts.push({ row, outcome: withPublicLinks(deps, account, row, outcome) });
      else {
        unavailable += 1;
        // Accepted but not issued yet: the next attempt consults this charge instead of issuing another.
        if (outcome.chargeId && outcome.chargeId !== row.provider_charge_id)
          pendingCharges.push({ id: row.id, chargeId: outcome.chargeId });
      }
    });
  }
  if (toSkip.length > 0 || attempts.length > 0 || pendingCharges.length > 0) {
    const recorded =
      (await recordAllRegistered(deps, attempts, toSkip, pendingCharges)) ??
      (await deps.db.transaction().execute(async (trx) => {
        const written = await recordResults(trx, attempts, toSkip, pendingCharges);
        await deps.beforeResultsCommit?.();
        return written;
      }));
    // After the commit: a rolled-back result was never a registration.
    for (const row of recorded.registered) deps.observer?.registered(row.created_at, recorded.at);
  }
  return unavailable > 0 ? backoff(deliveryCount) : 'done';
}

/** A charge the provider accepted without issuing it yet: its id is kept while the receivable stays queued. */
interface PendingCharge {
  id: string;
  chargeId: string;
}

function groupByAccount(rows: RegistrationRow[]): RegistrationRow[][] {
  const groups = new Map<string | null, RegistrationRow[]>();
  for (const row of rows) {
    const group = groups.get(row.provider_account_id);
    if (group) group.push(row);
    else groups.set(row.provider_account_id, [row]);
  }
  return [...groups.values()];
}

/**
 * The job's receivables, read by the statement that writes their durable registration marks: one row
 * per receivable still to register (queued, not cancelled), with its account and what identifies its
 * charge at the bank, committed before any create is sent. A receivable whose mark was already there
 * may have a charge at the bank from an earlier attempt, whatever process, message copy or redrive made
 * that attempt; the provider then looks the charge up before it creates anything. `marks` holds, per
 * receivable id marked, when an earlier attempt marked it (null: marked now, by this attempt).
 */
async function readAndMark(
  deps: RegistrationDeps,
  job: RegistrationJob,
): Promise<{ rows: RegistrationRow[]; marks: Map<string, Date | null> }> {
  // What identifies each charge at each kind of bank; the statement takes its account's kind's (a
  // receivable from before accounts existed: the legacy account's).
  const legacyKind = (await deps.accounts.forReceivable(null)).provider;
  const references = (Object.keys(deps.providers) as ProviderKind[]).flatMap((kind) =>
    job.receivable_ids.map((id) => ({ kind, id, reference: deps.providers[kind].bankReference?.(id) ?? id })),
  );
  const result = await sql<RegistrationRow & { marked_now: boolean; earlier_mark: Date | null }>`
    with job as (
      select ${sql.join(REGISTRATION_COLUMNS.map((c) => sql.ref(`r.${c}`)))}
      from receivables r where r.id = any(${job.receivable_ids}::uuid[]) and r.tenant_id = ${job.tenant_id}
    ),
    reference as (
      select * from unnest(${references.map((r) => r.kind)}::text[], ${references.map((r) => r.id)}::uuid[],
        ${references.map((r) => r.reference)}::text[]) as x(kind, id, bank_reference)
    ),
    marked as (
      insert into registration_marks (receivable_id, provider_account_id, bank_reference)
      select job.id, job.provider_account_id, reference.bank_reference
      from job
      left join provider_accounts a on a.id = job.provider_account_id
      join reference on reference.id = job.id and reference.kind = coalesce(a.provider, ${legacyKind})
      where job.registration_status = 'queued' and job.state <> 'cancelled'
      on conflict (receivable_id) do nothing
      returning receivable_id
    )
    select job.*, marked.receivable_id is not null as marked_now, earlier.marked_at as earlier_mark
    from job
    left join marked on marked.receivable_id = job.id
    left join registration_marks earlier on earlier.receivable_id = job.id`.execute(deps.db);
  const marks = new Map<string, Date | null>();
  const unseen: string[] = [];
  const rows = result.rows.map(({ marked_now, earlier_mark, ...row }) => {
    if (marked_now) marks.set(row.id, null);
    else if (earlier_mark) marks.set(row.id, earlier_mark);
    else if (row.registration_status === 'queued' && row.state !== 'cancelled') unseen.push(row.id);
    return row;
  });
  if (unseen.length > 0) {
    // Marked by another attempt while this statement ran: its mark stands.
    for (const mark of await deps.db
      .selectFrom('registration_marks')
      .select(['receivable_id', 'marked_at'])
      .where('receivable_id', 'in', unseen)
      .execute())
      marks.set(mark.receivable_id, mark.marked_at);
  }
  return { rows, marks };
}

/** One account's charges at its provider; a provider that cannot be reached leaves them all queued. */
async function registerGroup(
  deps: RegistrationDeps,
  account: ProviderAccount,
  rows: RegistrationRow[],
  marks: Map<string, Date | null>,
  deliveryCount: number,
): Promise<BatchRegistrationOutcome[]> {
  try {
    return await deps.providers[account.provider].registerMany(
      account,
      rows.map((row) => chargeRequest(row, marks.get(row.id) ?? null)),
    );
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError)) throw err;
    deps.logger.warn(
      { count: rows.length, deliveryCount, provider: account.provider, accountId: account.id, reason: err.message },
      'provider unavailable; registrations stay queued',
    );
    return rows.map(() => ({ kind: 'unavailable', reason: err.message }));
  }
}

/**
 * The slip PDF and QR code image links the ERP gets: the bank's, or signed gateway links when the bank's
 * PDF needs its credentials and it has no QR image.
 */
function withPublicLinks(
  deps: RegistrationDeps,
  account: ProviderAccount,
  row: RegistrationRow,
  outcome: RegistrationOutcome,
): RegistrationOutcome {
  if (outcome.kind !== 'registered') return outcome;
  const receivable = { id: row.id, dueDate: row.due_date };
  const pdfUrl = deps.slipLinks.forPdf(account, receivable, outcome.charge.pdfUrl);
  // A slip issued without PIX (the account has no PIX key): no QR code to draw, so no link to one.
  const qrcodeImageUrl =
    outcome.charge.pixCopyAndPaste === ''
      ? ''
      : deps.slipLinks.forQrCode(account, receivable, outcome.charge.qrcodeImageUrl);
  return { kind: 'registered', charge: { ...outcome.charge, pdfUrl, qrcodeImageUrl } };
}

type Registered = { row: RegistrationRow; outcome: { kind: 'registered'; charge: ProviderCharge } };

/**
 * The usual results, every charge of the job registered and every receivable still queued and pending,
 * in one statement (one round trip, one commit) instead of recordResults' transaction: the receivables
 * are locked and checked, then written with their callbacks only when all of them still stand as they
 * did; otherwise it writes nothing and answers undefined, and recordResults writes what each has come
 * to. Not taken with the test hook, which runs inside recordResults' transaction.
 */
async function recordAllRegistered(
  deps: RegistrationDeps,
  attempts: Attempt[],
  toSkip: RegistrationRow[],
  pendingCharges: PendingCharge[],
): Promise<{ registered: Array<Pick<ReceivableRow, 'created_at'>>; at: Date } | undefined> {
  if (deps.beforeResultsCommit || toSkip.length > 0 || pendingCharges.length > 0) return undefined;
  const registered = attempts.filter((a): a is Registered => a.outcome.kind === 'registered');
  if (registered.length === 0 || registered.length < attempts.length) return undefined;
  if (registered.some((a) => a.row.state !== 'pending')) return undefined;
  const now = new Date();
  const ids = registered.map((a) => a.row.id);
  const messages = callbackMessages(
    registered.map(({ row, outcome }) => registeredCallback(registeredRow(row, outcome.charge))),
  );
  const written = await sql<Pick<ReceivableRow, 'id' | 'created_at'>>`
    with v as (${registeredValues(registered)}),
    still as (
      select r.id from receivables r join v on r.id = v.id
      where r.registration_status = 'queued' and r.state = 'pending'
      for update of r
    ),
    updated as (
      ${registeredUpdate(now)}
      and (select count(*) from still) = ${registered.length}
      returning r.id, r.created_at
    ),
    callbacks as (${enqueueStatement(messages, { keys: messages.map(() => ids), among: sql`select id from updated` })})
    select id, created_at from updated`.execute(deps.db);
  if (written.rows.length === 0) return undefined;
  return { registered: written.rows, at: now };
}

/** A registered receivable as its callback shows it: the row and the charge the provider issued. */
function registeredRow(row: RegistrationRow, charge: ProviderCharge): RegisteredRow {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    url_callback: row.url_callback,
    account_receivable_id_as_sent: row.account_receivable_id_as_sent,
    typeable_line: charge.typeableLine,
    barcode: charge.barcode,
    our_number: charge.ourNumber,
    pix_copy_and_paste: charge.pixCopyAndPaste,
    qrcode_image_url: charge.qrcodeImageUrl,
    pdf_url: charge.pdfUrl,
  };
}

/** The charges of registered receivables as rows `v` (unnest: eight array parameters whatever the job size). */
function registeredValues(registered: Registered[]) {
  const charges = registered.map((a) => a.outcome.charge);
  return sql`select * from unnest(${registered.map((a) => a.row.id)}::uuid[], ${charges.map((c) => c.chargeId)}::text[],
      ${charges.map((c) => c.ourNumber)}::text[], ${charges.map((c) => c.barcode)}::text[], ${charges.map((c) => c.typeableLine)}::text[],
      ${charges.map((c) => c.pixCopyAndPaste)}::text[], ${charges.map((c) => c.qrcodeImageUrl)}::text[], ${charges.map((c) => c.pdfUrl)}::text[])
    as v(id, charge_id, our_number, barcode, typeable_line, pix, qr, pdf)`;
}

/** Writes the charges of `v` on their receivables, those still queued only (another worker may have written them). */
function registeredUpdate(now: Date) {
  return sql`update receivables r set registration_status = 'registered', provider_charge_id = v.charge_id, our_number = v.our_number,
      barcode = v.barcode, typeable_line = v.typeable_line, pix_copy_and_paste = v.pix, qrcode_image_url = v.qr, pdf_url = v.pdf,
      updated_at = ${now}, registered_at = ${now}
    from v
    where r.id = v.id and r.registration_status = 'queued'`;
}

/** Writes the results; returns the rows this call moved to registered (not those another worker wrote first) and when. */
async function recordResults(
  trx: Transaction<ReceivablesDatabase>,
  attempts: Attempt[],
  toSkip: RegistrationRow[],
  pendingCharges: PendingCharge[],
): Promise<{ registered: Array<Pick<ReceivableRow, 'created_at'>>; at: Date }> {
  const now = new Date();
  const newlyRegistered: Array<Pick<ReceivableRow, 'created_at'>> = [];
  const messages: OutboxMessage[] = [];
  if (toSkip.length > 0) {
    const skipped = await trx
      .updateTable('receivables')
      .set({ registration_status: 'skipped', updated_at: now })
      .where(
        'id',
        'in',
        toSkip.map((r) => r.id),
      )
      .where('registration_status', '=', 'queued')
      .returning(['id', 'tenant_id', 'provider_charge_id'])
      .execute();
    // A charge the provider accepted on an earlier attempt exists there: cancel it, quietly.
    for (const row of skipped.filter((r) => r.provider_charge_id !== null)) messages.push(cleanupJob(row));
  }
  for (const pending of pendingCharges) {
    await trx
      .updateTable('receivables')
      .set({ provider_charge_id: pending.chargeId, updated_at: now })
      .where('id', '=', pending.id)
      .where('registration_status', '=', 'queued')
      .execute();
  }
  const registered = attempts.filter((a): a is Registered => a.outcome.kind === 'registered');
  const rejected = attempts.filter(
    (a): a is { row: RegistrationRow; outcome: Extract<RegistrationOutcome, { kind: 'rejected' }> } =>
      a.outcome.kind === 'rejected',
  );
  const callbacks: CallbackRequest[] = [];

  if (registered.length > 0) {
    // Only rows still queued are written: another worker may have recorded the same result already.
    // Only what the callbacks need comes back.
    const updated = await sql<RegisteredRow & Pick<ReceivableRow, 'state' | 'created_at'>>`
      with v as (${registeredValues(registered)})
      ${registeredUpdate(now)}
      returning r.id, r.tenant_id, r.url_callback, r.account_receivable_id_as_sent, r.typeable_line, r.barcode, r.our_number, r.pix_copy_and_paste,
        r.qrcode_image_url, r.pdf_url, r.state, r.created_at`.execute(trx);
    newlyRegistered.push(...updated.rows);
    for (const row of updated.rows) {
      if (row.state === 'pending') callbacks.push(registeredCallback(row));
      // Cancelled while the provider was registering it: cancel the new charge too, quietly.
      else if (row.state === 'cancelled') messages.push(cleanupJob(row));
    }
  }

  for (const { row, outcome } of rejected) {
    const updated = await trx
      .updateTable('receivables')
      .set((eb) => ({
        registration_status: 'rejected',
        // The charge the bank named, failed or refused: a late notice about it still finds its receivable.
        ...(outcome.chargeId ? { provider_charge_id: outcome.chargeId } : {}),
        rejection_code: outcome.code,
        rejection_message: outcome.message,
        updated_at: now,
        state: eb
          .case()
          .when('state', '=', 'pending')
          .then('rejected' as const)
          .else(eb.ref('state'))
          .end(),
      }))
      .where('id', '=', row.id)
      .where('registration_status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    if (updated?.state === 'rejected' && row.state === 'pending') {
      await recordTransition(trx, [updated], 'pending', 'rejected', `provider rejected: ${outcome.code}`);
      callbacks.push(registrationFailedCallback(updated, outcome.code, outcome.message));
    }
  }
  await enqueue(trx, [...messages, ...callbackMessages(callbacks)]);
  return { registered: newlyRegistered, at: now };
}

function cleanupJob(row: { id: string; tenant_id: string }): OutboxMessage {
  const job: CancellationJob = { tenant_id: row.tenant_id, receivable_id: row.id, reason: 'cleanup' };
  return { stream: Streams.receivableCancellations, msgId: messageIds.cancellationCleanup(row.id), payload: job };
}

function chargeRequest(row: RegistrationRow, createMarkedAt: Date | null): ChargeRequest {
  const payer = row.payer as Payer;
  const lines = row.items as Array<{ description: string; quantity: number; price_cents: number }>;
  return {
    idempotencyKey: row.id,
    providerChargeId: row.provider_charge_id,
    createMarkedAt,
    kind: row.payment_method === 3 ? 'pix' : 'hybrid_slip',
    amountCents: row.amount_cents,
    issueDate: row.emission_date,
    dueDate: row.due_date,
    payer,
    discount:
      row.discount_cents !== null && row.discount_until !== null
        ? { amountCents: row.discount_cents, until: row.discount_until }
        : null,
    fineBp: row.fine_bp,
    interestPerDayCents: row.interest_cents_per_day,
    instructions: slipInstructions(row),
    descriptionLines: lines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      priceCents: l.price_cents,
    })),
    reference: row.account_receivable_id,
  };
}

/** The instruction lines printed on the slip (Portuguese: it is read by the payer and the bank). */
export function slipInstructions(
  row: Pick<ReceivableRow, 'discount_cents' | 'discount_until' | 'fine_bp' | 'interest_cents_per_day'>,
): string[] {
  const lines: string[] = [];
  if (row.discount_cents !== null && row.discount_until !== null)
    lines.push(
      `Até ${formatBrazilianDate(row.discount_until)}, conceder desconto de ${formatReais(row.discount_cents)}.`,
    );
  if (row.fine_bp > 0) lines.push(`Após o vencimento, cobrar multa de ${formatPercent(row.fine_bp)}.`);
  if (row.interest_cents_per_day > 0)
    lines.push(`Após o vencimento, cobrar juros de ${formatReais(row.interest_cents_per_day)} por dia de atraso.`);
  return lines;
}
