import { formatBrazilianDate, formatPercent, formatReais } from '@payments/br-format';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from '@payments/logger';
import {
  messageIds,
  Streams,
  type CallbackRequest,
  type CancellationJob,
  type JobOutcome,
  type RegistrationJob,
} from '@payments/contracts';
import { enqueue, type OutboxMessage } from '@payments/outbox';
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
  type PaymentProvider,
  type ProviderCharge,
  type RegistrationOutcome,
} from './ports';
import { recordTransition } from './state-history';

export interface RegistrationDeps {
  db: Kysely<ReceivablesDatabase>;
  provider: PaymentProvider;
  logger: Logger;
  /** Told about registrations once they are committed (metrics); optional. */
  observer?: RegistrationObserver;
}

/** A port for whoever watches registrations (e.g. a latency histogram): the domain knows no metrics library. */
export interface RegistrationObserver {
  /** A receivable created at `createdAt` was registered with the provider at `registeredAt`. */
  registered(createdAt: Date, registeredAt: Date): void;
}

/** What registering a receivable reads: its charge terms and where it stands. */
const REGISTRATION_COLUMNS = [
  'id',
  'account_receivable_id',
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
 * Registers a job's receivables with the provider (one batch call) and records the results with their
 * callbacks in one transaction. Safe to run twice for the same job (a redelivery after a crash): the
 * provider is idempotent on our receivable ids, and a result is written only while its receivable is
 * still queued. When the provider cannot take some of them now, the job is retried later (the ones
 * already registered are skipped then).
 */
export async function registerReceivables(
  deps: RegistrationDeps,
  job: RegistrationJob,
  deliveryCount: number,
): Promise<JobOutcome> {
  const rows = await deps.db
    .selectFrom('receivables')
    .select(REGISTRATION_COLUMNS)
    .where('id', 'in', job.receivable_ids)
    .where('tenant_id', '=', job.tenant_id)
    .execute();
  const queued = rows.filter((r) => r.registration_status === 'queued');
  const toSkip = queued.filter((r) => r.state === 'cancelled').map((r) => r.id); // cancelled before it reached the provider
  const toRegister = queued.filter((r) => r.state !== 'cancelled');

  let outcomes: BatchRegistrationOutcome[] = [];
  if (toRegister.length > 0) {
    try {
      outcomes = await deps.provider.registerMany(toRegister.map(chargeRequest));
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError)) throw err;
      deps.logger.warn(
        { count: toRegister.length, deliveryCount, reason: err.message },
        'provider unavailable; registrations stay queued',
      );
      outcomes = toRegister.map(() => ({ kind: 'unavailable', reason: err.message }));
    }
  }
  const attempts: Attempt[] = [];
  let unavailable = 0;
  toRegister.forEach((row, i) => {
    const outcome = outcomes[i];
    if (outcome.kind === 'unavailable') unavailable += 1;
    else attempts.push({ row, outcome });
  });
  if (toSkip.length > 0 || attempts.length > 0) {
    const recorded = await deps.db.transaction().execute((trx) => recordResults(trx, attempts, toSkip));
    // After the commit: a rolled-back result was never a registration.
    for (const row of recorded.registered) deps.observer?.registered(row.created_at, recorded.at);
  }
  return unavailable > 0 ? backoff(deliveryCount) : 'done';
}

/** Writes the results; returns the rows this call moved to registered (not those another worker wrote first) and when. */
async function recordResults(
  trx: Transaction<ReceivablesDatabase>,
  attempts: Attempt[],
  toSkip: string[],
): Promise<{ registered: Array<Pick<ReceivableRow, 'created_at'>>; at: Date }> {
  const now = new Date();
  const newlyRegistered: Array<Pick<ReceivableRow, 'created_at'>> = [];
  if (toSkip.length > 0) {
    await trx
      .updateTable('receivables')
      .set({ registration_status: 'skipped', updated_at: now })
      .where('id', 'in', toSkip)
      .where('registration_status', '=', 'queued')
      .execute();
  }
  const registered = attempts.filter(
    (a): a is { row: RegistrationRow; outcome: { kind: 'registered'; charge: ProviderCharge } } =>
      a.outcome.kind === 'registered',
  );
  const rejected = attempts.filter(
    (a): a is { row: RegistrationRow; outcome: { kind: 'rejected'; code: string; message: string } } =>
      a.outcome.kind === 'rejected',
  );
  const messages: OutboxMessage[] = [];
  const callbacks: CallbackRequest[] = [];

  if (registered.length > 0) {
    const charges = registered.map((a) => a.outcome.charge);
    // Only rows still queued are written: another worker may have recorded the same result already.
    // unnest: eight array parameters whatever the job size; only what the callbacks need comes back.
    const updated = await sql<RegisteredRow & Pick<ReceivableRow, 'state' | 'created_at'>>`
      update receivables r set registration_status = 'registered', provider_charge_id = v.charge_id, our_number = v.our_number,
        barcode = v.barcode, typeable_line = v.typeable_line, pix_copy_and_paste = v.pix, qrcode_image_url = v.qr, pdf_url = v.pdf, updated_at = ${now}
      from unnest(${registered.map((a) => a.row.id)}::uuid[], ${charges.map((c) => c.chargeId)}::text[], ${charges.map((c) => c.ourNumber)}::text[],
        ${charges.map((c) => c.barcode)}::text[], ${charges.map((c) => c.typeableLine)}::text[], ${charges.map((c) => c.pixCopyAndPaste)}::text[],
        ${charges.map((c) => c.qrcodeImageUrl)}::text[], ${charges.map((c) => c.pdfUrl)}::text[])
        as v(id, charge_id, our_number, barcode, typeable_line, pix, qr, pdf)
      where r.id = v.id and r.registration_status = 'queued'
      returning r.id, r.tenant_id, r.url_callback, r.account_receivable_id, r.typeable_line, r.barcode, r.our_number, r.pix_copy_and_paste,
        r.qrcode_image_url, r.pdf_url, r.state, r.created_at`.execute(trx);
    newlyRegistered.push(...updated.rows);
    for (const row of updated.rows) {
      if (row.state === 'pending') callbacks.push(registeredCallback(row));
      else if (row.state === 'cancelled') {
        // Cancelled while the provider was registering it: cancel the new charge too, quietly.
        const job: CancellationJob = { tenant_id: row.tenant_id, receivable_id: row.id, reason: 'cleanup' };
        messages.push({
          stream: Streams.receivableCancellations,
          msgId: messageIds.cancellationCleanup(row.id),
          payload: job,
        });
      }
    }
  }

  for (const { row, outcome } of rejected) {
    const updated = await trx
      .updateTable('receivables')
      .set((eb) => ({
        registration_status: 'rejected',
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

function chargeRequest(row: RegistrationRow): ChargeRequest {
  const payer = row.payer as Payer;
  const lines = row.items as Array<{ description: string; quantity: number; price_cents: number }>;
  return {
    idempotencyKey: row.id,
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
