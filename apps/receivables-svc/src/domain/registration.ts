import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { Streams, type CancellationJob, type RegistrationJob } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import { registeredCallback, registrationFailedCallback } from './callback-messages';
import { backoff, type JobOutcome } from './job-outcome';
import { ProviderUnavailableError, type ChargeRequest, type Payer, type PaymentProvider, type RegistrationOutcome } from './ports';
import { recordTransition } from './state-history';

export interface RegistrationDeps {
  db: Kysely<ReceivablesDatabase>;
  provider: PaymentProvider;
  logger: Logger;
}

/**
 * Registers one receivable with the provider and records the result with its callback. Safe to run
 * twice for the same job (a redelivery after a crash): the provider call is idempotent on our
 * receivable id, and the result is written only while the receivable is still queued.
 */
export async function registerReceivable(deps: RegistrationDeps, job: RegistrationJob, deliveryCount: number): Promise<JobOutcome> {
  const row = await deps.db.selectFrom('receivables').selectAll().where('id', '=', job.receivable_id).where('tenant_id', '=', job.tenant_id).executeTakeFirst();
  if (!row || row.registration_status !== 'queued') return 'done';
  if (row.state === 'cancelled') {
    // Cancelled before it reached the provider: nothing to register.
    await deps.db.updateTable('receivables').set({ registration_status: 'skipped', updated_at: new Date() }).where('id', '=', row.id).where('registration_status', '=', 'queued').execute();
    return 'done';
  }
  let outcome: RegistrationOutcome;
  try {
    outcome = await deps.provider.register(chargeRequest(row));
  } catch (err) {
    if (err instanceof ProviderUnavailableError) {
      deps.logger.warn({ receivableId: row.id, deliveryCount, reason: err.message }, 'provider unavailable; registration stays queued');
      return backoff(deliveryCount);
    }
    throw err;
  }
  await recordOutcome(deps.db, row.id, outcome);
  return 'done';
}

async function recordOutcome(db: Kysely<ReceivablesDatabase>, receivableId: string, outcome: RegistrationOutcome): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('receivables').selectAll().where('id', '=', receivableId).forUpdate().executeTakeFirstOrThrow();
    if (current.registration_status !== 'queued') return; // another worker got here first
    const now = new Date();
    if (outcome.kind === 'registered') {
      const c = outcome.charge;
      const updated = await trx
        .updateTable('receivables')
        .set({
          registration_status: 'registered', provider_charge_id: c.chargeId, our_number: c.ourNumber, barcode: c.barcode, typeable_line: c.typeableLine,
          pix_copy_and_paste: c.pixCopyAndPaste, qrcode_image_url: c.qrcodeImageUrl, pdf_url: c.pdfUrl, updated_at: now,
        })
        .where('id', '=', receivableId)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (updated.state === 'pending') {
        await enqueue(trx, [registeredCallback(updated)]);
      } else if (updated.state === 'cancelled') {
        // Cancelled while the provider was registering it: cancel the new charge too, quietly.
        const job: CancellationJob = { tenant_id: updated.tenant_id, receivable_id: updated.id, reason: 'cleanup' };
        await enqueue(trx, [{ stream: Streams.receivableCancellations, msgId: `cleanup_${updated.id}`, payload: job }]);
      }
      return;
    }
    const updated = await trx
      .updateTable('receivables')
      .set({
        registration_status: 'rejected', rejection_code: outcome.code, rejection_message: outcome.message, updated_at: now,
        state: current.state === 'pending' ? 'rejected' : current.state,
      })
      .where('id', '=', receivableId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (current.state === 'pending') {
      await recordTransition(trx, [updated], 'pending', 'rejected', `provider rejected: ${outcome.code}`);
      await enqueue(trx, [registrationFailedCallback(updated, outcome.code, outcome.message)]);
    }
  });
}

function chargeRequest(row: ReceivableRow): ChargeRequest {
  const payer = row.payer as Payer;
  const lines = row.items as Array<{ description: string; quantity: number; price_cents: number }>;
  return {
    idempotencyKey: row.id,
    kind: row.payment_method === 3 ? 'pix' : 'hybrid_slip',
    amountCents: row.amount_cents,
    issueDate: row.emission_date,
    dueDate: row.due_date,
    payer,
    discount: row.discount_cents !== null && row.discount_until !== null ? { amountCents: row.discount_cents, until: row.discount_until } : null,
    fineBp: row.fine_bp,
    interestPerDayCents: row.interest_cents_per_day,
    instructions: slipInstructions(row),
    descriptionLines: lines.map((l) => ({ description: l.description, quantity: l.quantity, priceCents: l.price_cents })),
    reference: row.account_receivable_id,
  };
}

const brl = (cents: number) => `R$ ${(cents / 100).toFixed(2).replace('.', ',').replace(/\B(?=(\d{3})+(?!\d))/g, '.')}`;
const brDate = (iso: string) => iso.split('-').reverse().join('/');

/** The instruction lines printed on the slip (Portuguese: it is read by the payer and the bank). */
export function slipInstructions(row: Pick<ReceivableRow, 'discount_cents' | 'discount_until' | 'fine_bp' | 'interest_cents_per_day'>): string[] {
  const lines: string[] = [];
  if (row.discount_cents !== null && row.discount_until !== null) lines.push(`Até ${brDate(row.discount_until)}, conceder desconto de ${brl(row.discount_cents)}.`);
  if (row.fine_bp > 0) lines.push(`Após o vencimento, cobrar multa de ${(row.fine_bp / 100).toFixed(2).replace('.', ',')}%.`);
  if (row.interest_cents_per_day > 0) lines.push(`Após o vencimento, cobrar juros de ${brl(row.interest_cents_per_day)} por dia de atraso.`);
  return lines;
}
