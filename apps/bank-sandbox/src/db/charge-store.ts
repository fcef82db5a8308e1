import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { BankSandboxDatabase, ChargeRow } from './schema';
import { accountFor } from '../domain/beneficiary';
import { acceptsMethod, type ChargeOwner, type ChargeTerms, type LedgerCharge } from '../domain/charge';
import { sandboxFeeCents, type SettlementMethod } from '../domain/money';
import { formatOurNumber, issuePaymentData, type PayeeAccount } from '../domain/slip-issuer';
import { OurNumberPool } from '../domain/our-number-pool';
import { chargePaidEvent } from '../domain/webhook-event';

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
  private readonly numbers = new OurNumberPool();

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
   * with the one row that won the unique index (a loser's our_number is simply skipped). Callers
   * look the key up first, so a plain replay does not spend a number.
   */
  async register(key: string, fingerprint: string, order: ChargeOrder): Promise<RegisterOutcome> {
    const [outcome] = await this.registerMany([{ key, fingerprint, order }]);
    return outcome;
  }

  /**
   * Registers many charges in one statement (and one commit) whatever their number (the bank's batch,
   * "remessa", interface): new keys go in with our_numbers held ahead (OurNumberPool), keys already used
   * are answered from the ledger, and the same statement draws the numbers the next create will use.
   * A key another request inserted while this one ran is read back by a second statement. Outcomes
   * come back in request order; of a key sent twice, the first is created and the second answered by it.
   */
  async registerMany(
    requests: Array<{ key: string; fingerprint: string; order: ChargeOrder }>,
  ): Promise<RegisterOutcome[]> {
    if (requests.length === 0) return [];
    const firsts = new Map<string, (typeof requests)[number]>();
    for (const r of requests) if (!firsts.has(r.key)) firsts.set(r.key, r);
    const fresh = [...firsts.values()];
    if (this.numbers.size < fresh.length) await this.draw(fresh.length - this.numbers.size + NUMBERS_AHEAD);
    const numbers = this.numbers.take(fresh.length);
    const rows = fresh.map((r, i) => this.chargeValues(formatOurNumber(numbers[i]), r.key, r.fingerprint, r.order));
    const found = await this.insertOrFind(rows, fresh.length);
    const byKey = new Map(found.rows.map((row) => [row.idempotency_key, row]));
    this.numbers.add(found.drawn);
    const lost = fresh.filter((r) => !byKey.has(r.key)).map((r) => r.key);
    if (lost.length > 0) {
      // Raced by another request with the same keys: theirs stand.
      for (const row of await this.db.selectFrom('charges').selectAll().where('idempotency_key', 'in', lost).execute())
        byKey.set(row.idempotency_key, row);
    }
    return requests.map((r) =>
      outcomeFor(byKey.get(r.key), r.fingerprint, found.created.has(r.key) && firsts.get(r.key) === r),
    );
  }

  /** Tops the pool up by `count` numbers, in a statement of its own (the first create, or one larger than the pool). */
  private async draw(count: number): Promise<void> {
    const drawn = await sql<{
      value: number;
    }>`select nextval('our_number_seq') as value from generate_series(1, ${count})`.execute(this.db);
    this.numbers.add(drawn.rows.map((r) => Number(r.value)));
  }

  /**
   * One statement: inserts the rows whose keys are new, reads the rows of keys used before it began,
   * and draws `refill` numbers from the sequence for the pool. Rows come in arrays, one per column
   * (unnest), whatever their number.
   */
  private async insertOrFind(
    rows: ReadonlyArray<ReturnType<typeof rowValues>>,
    refill: number,
  ): Promise<{ rows: ChargeRow[]; created: Set<string>; drawn: number[] }> {
    const arrays = CHARGE_COLUMNS.map(([column, type]) => sql`${rows.map((r) => r[column])}::${sql.raw(type)}[]`);
    const columns = sql.join(CHARGE_COLUMNS.map(([c]) => sql.id(c)));
    const result = await sql<ChargeRow & { created: boolean; drawn: string[] | number[] }>`
      with inserted as (
        insert into charges (${columns})
        select * from unnest(${sql.join(arrays)})
        on conflict (idempotency_key) do nothing
        returning *
      ),
      drawn as (
        select coalesce(array_agg(nextval('our_number_seq')), '{}') as numbers from generate_series(1, ${refill})
      )
      select true as created, inserted.*, (select numbers from drawn) as drawn from inserted
      union all
      select false, charges.*, (select numbers from drawn) from charges
        where idempotency_key = any(${rows.map((r) => r.idempotency_key)}::text[])`.execute(this.db);
    const created = new Set(result.rows.filter((r) => r.created).map((r) => r.idempotency_key));
    const drawn = (result.rows[0]?.drawn ?? []).map(Number);
    return { rows: result.rows.map(({ created: _c, drawn: _d, ...row }) => row), created, drawn };
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

/**
 * our_numbers the pool holds after a create: each create draws as many as it used, so a create of up
 * to this many charges draws none in a statement of its own.
 */
const NUMBERS_AHEAD = 100;

/** The columns a new charge is written with, and their Postgres types (for unnest). */
const CHARGE_COLUMNS = [
  ['charge_id', 'uuid'],
  ['our_number', 'text'],
  ['idempotency_key', 'text'],
  ['request_fingerprint', 'text'],
  ['kind', 'text'],
  ['status', 'text'],
  ['amount_cents', 'bigint'],
  ['issue_date', 'text'],
  ['due_date', 'text'],
  ['payer', 'jsonb'],
  ['discount', 'jsonb'],
  ['fine_percent_bp', 'integer'],
  ['interest_per_day_cents', 'bigint'],
  ['instructions', 'jsonb'],
  ['description_lines', 'jsonb'],
  ['reference', 'text'],
  ['barcode', 'text'],
  ['typeable_line', 'text'],
  ['pix_copy_and_paste', 'text'],
  ['beneficiary', 'jsonb'],
  ['account_reference', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof ReturnType<typeof rowValues>, string]>;

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
