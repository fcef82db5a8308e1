import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { BankSandboxDatabase, ChargeRow } from '../db/schema';
import { accountFor } from './beneficiary';
import { acceptsMethod, type ChargeOwner, type ChargeTerms, type LedgerCharge } from './charge';
import { sandboxFeeCents, type SettlementMethod } from './money';
import { formatOurNumber, issuePaymentData, type PayeeAccount } from './slip-issuer';
import { chargePaidEvent } from './webhook-event';

export type RegisterOutcome =
  /** A new charge was stored. */
  | { outcome: 'created'; charge: LedgerCharge }
  /** The same Idempotency-Key with the same request: the charge it created, nothing new. */
  | { outcome: 'replayed'; charge: LedgerCharge }
  /** The same Idempotency-Key with another request. */
  | { outcome: 'key_reused' };

export type CancelOutcome =
  | { outcome: 'cancelled'; charge: LedgerCharge }
  | { outcome: 'not_open'; charge: LedgerCharge }
  | { outcome: 'not_found' };

export type SettleOutcome =
  | { outcome: 'settled'; charge: LedgerCharge; eventId: string }
  | { outcome: 'not_open'; charge: LedgerCharge }
  | { outcome: 'method_not_accepted'; charge: LedgerCharge }
  | { outcome: 'not_found' };

/** What a caller asks to register: the charge's terms and whose it is. */
export interface ChargeOrder {
  terms: ChargeTerms;
  owner: ChargeOwner;
}

/**
 * The bank's ledger of charges. Every state change is one conditional statement or one transaction.
 * our_numbers come from one sequence whatever the beneficiary, so each names one charge sandbox-wide.
 */
export class ChargeStore {
  constructor(
    private readonly db: Kysely<BankSandboxDatabase>,
    private readonly account: PayeeAccount,
  ) {}

  /** What an Idempotency-Key already stands for: null when it was never used. */
  async lookupIdempotencyKey(key: string, fingerprint: string): Promise<RegisterOutcome | null> {
    const row = await this.db.selectFrom('charges').selectAll().where('idempotency_key', '=', key).executeTakeFirst();
    if (!row) return null;
    return row.request_fingerprint === fingerprint
      ? { outcome: 'replayed', charge: toCharge(row) }
      : { outcome: 'key_reused' };
  }

  /**
   * Registers a charge exactly once per Idempotency-Key: requests racing with the same key all end up
   * with the one row that won the unique index (a loser's sequence number is simply skipped). Callers
   * look the key up first, so a plain replay does not spend a number.
   */
  async register(key: string, fingerprint: string, order: ChargeOrder): Promise<RegisterOutcome> {
    const { value } = await sql<{ value: number }>`select nextval('our_number_seq') as value`
      .execute(this.db)
      .then((r) => r.rows[0]);
    const ourNumber = formatOurNumber(Number(value));
    const inserted = await this.db
      .insertInto('charges')
      .values(this.chargeValues(ourNumber, key, fingerprint, order))
      .onConflict((oc) => oc.column('idempotency_key').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { outcome: 'created', charge: toCharge(inserted) };
    const winner = await this.lookupIdempotencyKey(key, fingerprint);
    if (!winner) throw new Error(`charge with Idempotency-Key ${key} vanished after a conflict`);
    return winner;
  }

  /**
   * Registers many charges in three statements whatever their number (the bank's batch, "remessa",
   * interface): keys already used are answered from the ledger, new ones get our numbers from one
   * sequence call and go in one multi-row insert. Outcomes come back in request order.
   */
  async registerMany(
    requests: Array<{ key: string; fingerprint: string; order: ChargeOrder }>,
  ): Promise<RegisterOutcome[]> {
    if (requests.length === 0) return [];
    const keys = requests.map((r) => r.key);
    const existing = new Map(
      (await this.db.selectFrom('charges').selectAll().where('idempotency_key', 'in', keys).execute()).map((row) => [
        row.idempotency_key,
        row,
      ]),
    );
    const fresh = requests.filter((r, i) => !existing.has(r.key) && keys.indexOf(r.key) === i);
    if (fresh.length > 0) {
      const numbers = await sql<{
        value: string;
      }>`select nextval('our_number_seq') as value from generate_series(1, ${fresh.length})`.execute(this.db);
      const rows = fresh.map((r, i) =>
        this.chargeValues(formatOurNumber(Number(numbers.rows[i].value)), r.key, r.fingerprint, r.order),
      );
      const inserted = await this.db
        .insertInto('charges')
        .values(rows)
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .returningAll()
        .execute();
      for (const row of inserted) existing.set(row.idempotency_key, row);
      const lost = fresh.filter((r) => !existing.has(r.key)).map((r) => r.key);
      if (lost.length > 0) {
        // Raced by another request with the same keys: theirs stand.
        for (const row of await this.db
          .selectFrom('charges')
          .selectAll()
          .where('idempotency_key', 'in', lost)
          .execute())
          existing.set(row.idempotency_key, row);
      }
      const created = new Set(inserted.map((r) => r.idempotency_key));
      return requests.map((r) =>
        outcomeFor(existing.get(r.key), r.fingerprint, created.has(r.key) && fresh.find((f) => f.key === r.key) === r),
      );
    }
    return requests.map((r) => outcomeFor(existing.get(r.key), r.fingerprint, false));
  }

  async get(chargeId: string): Promise<LedgerCharge | null> {
    const row = await this.db.selectFrom('charges').selectAll().where('charge_id', '=', chargeId).executeTakeFirst();
    return row ? toCharge(row) : null;
  }

  async getByOurNumber(ourNumber: string): Promise<LedgerCharge | null> {
    const row = await this.db.selectFrom('charges').selectAll().where('our_number', '=', ourNumber).executeTakeFirst();
    return row ? toCharge(row) : null;
  }

  /** Cancels an open charge; cancelling a cancelled one is answered with it again (a retried cancel). */
  async cancel(chargeId: string, at: Date = new Date()): Promise<CancelOutcome> {
    const updated = await this.db
      .updateTable('charges')
      .set({ status: 'cancelled', cancelled_at: at })
      .where('charge_id', '=', chargeId)
      .where('status', '=', 'registered')
      .returningAll()
      .executeTakeFirst();
    if (updated) return { outcome: 'cancelled', charge: toCharge(updated) };
    const current = await this.get(chargeId);
    if (!current) return { outcome: 'not_found' };
    return current.status === 'cancelled'
      ? { outcome: 'cancelled', charge: current }
      : { outcome: 'not_open', charge: current };
  }

  /**
   * Settles an open charge and records its webhook in the same transaction, so a payment is never
   * without its notification (and a crash right after it still delivers it on the next start).
   * amountPaidCents null = the charge's value. `traceContext` (W3C headers) is kept with the
   * notification, whose delivery then continues the payment's trace.
   */
  async settle(
    ourNumber: string,
    method: SettlementMethod,
    amountPaidCents: number | null,
    at: Date = new Date(),
    traceContext: Record<string, string> | null = null,
  ): Promise<SettleOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('charges')
        .selectAll()
        .where('our_number', '=', ourNumber)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return { outcome: 'not_found' };
      const current = toCharge(row);
      if (current.status !== 'registered') return { outcome: 'not_open', charge: current };
      if (!acceptsMethod(current.kind, method)) return { outcome: 'method_not_accepted', charge: current };
      const paid = amountPaidCents ?? current.amountCents;
      const settlement = { paidAt: at, amountPaidCents: paid, feeCents: sandboxFeeCents(method, paid), method };
      const updated = await trx
        .updateTable('charges')
        .set({
          status: 'paid',
          paid_at: at,
          amount_paid_cents: paid,
          fee_cents: settlement.feeCents,
          payment_method: method,
        })
        .where('charge_id', '=', current.chargeId)
        .returningAll()
        .executeTakeFirstOrThrow();
      const eventId = await recordNotification(
        trx,
        current.chargeId,
        JSON.stringify(chargePaidEvent(current, settlement)),
        at,
        traceContext,
      );
      return { outcome: 'settled', charge: toCharge(updated), eventId };
    });
  }

  /** The row of a new charge: its slip and BR Code issued on the beneficiary's account (or the sandbox's). */
  private chargeValues(ourNumber: string, key: string, fingerprint: string, { terms, owner }: ChargeOrder) {
    const payment = issuePaymentData(accountFor(this.account, owner.beneficiary), ourNumber, terms);
    return rowValues(randomUUID(), ourNumber, key, fingerprint, terms, owner, payment);
  }
}

function rowValues(
  chargeId: string,
  ourNumber: string,
  key: string,
  fingerprint: string,
  terms: ChargeTerms,
  owner: ChargeOwner,
  payment: ReturnType<typeof issuePaymentData>,
) {
  return {
    charge_id: chargeId,
    our_number: ourNumber,
    idempotency_key: key,
    request_fingerprint: fingerprint,
    kind: terms.kind,
    status: 'registered' as const,
    amount_cents: terms.amountCents,
    issue_date: terms.issueDate,
    due_date: terms.dueDate,
    payer: JSON.stringify(terms.payer),
    discount: JSON.stringify(terms.discount),
    fine_percent_bp: terms.finePercentBp,
    interest_per_day_cents: terms.interestPerDayCents,
    instructions: JSON.stringify(terms.instructions),
    description_lines: JSON.stringify(terms.descriptionLines),
    reference: terms.reference,
    barcode: payment.barcode,
    typeable_line: payment.typeableLine,
    pix_copy_and_paste: payment.pixCopyAndPaste,
    beneficiary: owner.beneficiary ? JSON.stringify(owner.beneficiary) : null,
    account_reference: owner.accountReference,
  };
}

function outcomeFor(row: ChargeRow | undefined, fingerprint: string, created: boolean): RegisterOutcome {
  if (!row) throw new Error('a registered charge vanished');
  if (row.request_fingerprint !== fingerprint) return { outcome: 'key_reused' };
  return { outcome: created ? 'created' : 'replayed', charge: toCharge(row) };
}

async function recordNotification(
  trx: Transaction<BankSandboxDatabase>,
  chargeId: string,
  body: string,
  at: Date,
  traceContext: Record<string, string> | null,
): Promise<string> {
  const eventId = randomUUID();
  await trx
    .insertInto('notifications')
    .values({
      event_id: eventId,
      charge_id: chargeId,
      event_type: 'charge.paid',
      body,
      status: 'pending',
      next_attempt_at: at,
      trace_context: traceContext ? JSON.stringify(traceContext) : null,
    })
    .execute();
  return eventId;
}

function toCharge(row: ChargeRow): LedgerCharge {
  return {
    chargeId: row.charge_id,
    beneficiary: row.beneficiary,
    accountReference: row.account_reference,
    ourNumber: row.our_number,
    kind: row.kind,
    status: row.status,
    amountCents: row.amount_cents,
    issueDate: row.issue_date,
    dueDate: row.due_date,
    payer: row.payer,
    discount: row.discount,
    finePercentBp: row.fine_percent_bp,
    interestPerDayCents: row.interest_per_day_cents,
    instructions: row.instructions,
    descriptionLines: row.description_lines,
    reference: row.reference,
    barcode: row.barcode,
    typeableLine: row.typeable_line,
    pixCopyAndPaste: row.pix_copy_and_paste,
    createdAt: row.created_at,
    cancelledAt: row.cancelled_at,
    settlement:
      row.status === 'paid' &&
      row.paid_at &&
      row.amount_paid_cents !== null &&
      row.fee_cents !== null &&
      row.payment_method
        ? {
            paidAt: row.paid_at,
            amountPaidCents: row.amount_paid_cents,
            feeCents: row.fee_cents,
            method: row.payment_method,
          }
        : null,
  };
}
