import { sql, type Kysely } from 'kysely';
import type { ReceivablesDatabase } from './schema';

/** A bank's published limit for one endpoint: `calls` per `windowMs` (Inter: per minute). */
export interface CallLimit {
  calls: number;
  windowMs: number;
}

/** The call waited longer than its bound for its budget: the bank is not asked now (retried later). */
export class BudgetExhaustedError extends Error {
  override readonly name = 'BudgetExhaustedError';
}

/** Why a call waits (for the log and the metrics): no budget left in the window, or the bank said to wait. */
export type WaitReason = 'budget' | 'blocked';

/**
 * One call budget per bank account and endpoint for every instance together: a token bucket row in
 * Postgres, taken from atomically (one UPDATE). The bucket holds a twentieth of the limit (at least 2)
 * and refills the rest evenly over a little more than the window, so no window of that length ever
 * sees more than the limit, whichever instances make the calls. A call waits for its token up to
 * `maxWaitMs`; beyond that it is not made (BudgetExhaustedError). A 429's Retry-After (or a 403's
 * growing delay) is stored as the row's blocked_until: every instance waits it out.
 */
export class PostgresCallBudget {
  constructor(
    private readonly db: Kysely<ReceivablesDatabase>,
    private readonly maxWaitMs: number,
  ) {}

  /** Waits for one call's token; `onWait` is told once when the call has to wait. */
  async take(
    bucket: string,
    endpoint: string,
    limit: CallLimit,
    onWait?: (reason: WaitReason, ms: number) => void,
  ): Promise<void> {
    const { capacity, perMs } = shape(limit);
    const deadline = Date.now() + this.maxWaitMs;
    let told = false;
    for (;;) {
      const taken = await sql<{ tokens: number }>`
        update call_budgets b set
          tokens = least(${capacity}::float8, b.tokens + ${perMs}::float8 * greatest(0, extract(epoch from n.t - b.refreshed_at) * 1000)) - 1,
          -- n.t was read before this row's lock was had: a concurrent taker may have moved it later already.
          refreshed_at = greatest(b.refreshed_at, n.t)
        from (select clock_timestamp() as t) n
        where b.bucket = ${bucket} and b.endpoint = ${endpoint} and b.blocked_until <= n.t
          and least(${capacity}::float8, b.tokens + ${perMs}::float8 * greatest(0, extract(epoch from n.t - b.refreshed_at) * 1000)) >= 1
        returning b.tokens`.execute(this.db);
      if (taken.rows.length > 0) return;
      const state = await sql<{ blocked_ms: number; budget_ms: number }>`
        select (case when b.blocked_until > n.t then extract(epoch from b.blocked_until - n.t) * 1000 else 0 end)::float8 as blocked_ms,
          greatest(0, (1 - least(${capacity}::float8, b.tokens + ${perMs}::float8 * greatest(0, extract(epoch from n.t - b.refreshed_at) * 1000))) / ${perMs}::float8)::float8 as budget_ms
        from call_budgets b, (select clock_timestamp() as t) n
        where b.bucket = ${bucket} and b.endpoint = ${endpoint}`.execute(this.db);
      const row = state.rows[0];
      if (!row) {
        await sql`insert into call_budgets (bucket, endpoint, tokens, refreshed_at)
          values (${bucket}, ${endpoint}, ${capacity}, clock_timestamp()) on conflict do nothing`.execute(this.db);
        continue;
      }
      const reason: WaitReason = row.blocked_ms > 0 ? 'blocked' : 'budget';
      // A few ms on top, and a little spread: instances waiting for the same token do not all wake at once.
      const waitMs = Math.ceil(Math.max(row.blocked_ms, row.budget_ms)) + 5 + Math.floor(Math.random() * 20);
      if (Date.now() + waitMs > deadline)
        throw new BudgetExhaustedError(
          `${endpoint}: ${reason === 'blocked' ? 'the bank said to wait' : 'no call budget left'} for ${Math.round(waitMs / 1000)} s more`,
        );
      if (!told) onWait?.(reason, waitMs);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  /** No call to this endpoint of this account before `until`, from any instance (a later block is kept). */
  async block(bucket: string, endpoint: string, until: Date, limit: CallLimit): Promise<void> {
    const { capacity } = shape(limit);
    await sql`insert into call_budgets (bucket, endpoint, tokens, refreshed_at, blocked_until)
      values (${bucket}, ${endpoint}, ${capacity}, clock_timestamp(), ${until})
      on conflict (bucket, endpoint) do update set blocked_until = greatest(call_budgets.blocked_until, excluded.blocked_until)`.execute(
      this.db,
    );
  }
}

/**
 * Bucket size and refill rate: burst + refill over one window stay under the limit. A twentieth of
 * the limit (at least 2: a webhook read and its setting right after, at 5 a minute) comes at once; the
 * rest refills over the window and a tenth more, so calls that took their budget on time but leave or
 * arrive seconds later (a busy event loop, a TLS handshake, the network) still fall within the bank's
 * count: the money chaos test saw 121 list calls in one of the sandbox's minutes with a thirtieth.
 */
function shape({ calls, windowMs }: CallLimit): { capacity: number; perMs: number } {
  const capacity = Math.min(calls, Math.max(2, Math.floor(calls / 20)));
  return { capacity, perMs: Math.max(1, calls - capacity) / (windowMs * 1.1) };
}
