import { sql, type Kysely } from 'kysely';
import { ProviderKinds, type ProviderKind, type RegistrationHealthReply } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import type { ReceivablesDatabase } from '../db/schema';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type ChargeRequest,
  type PaymentProvider,
  type PaymentProviders,
  type ProviderAccount,
} from './ports';

/**
 * Charges stuck on a bank that does not take them (a charge is rejected only when nothing can
 * be live at the bank, so an unreachable bank leaves it pending, retried): made visible to operators
 * (a metric, the admin API's registration health) and in the charge's own history, without changing
 * its state. Each attempt the bank did not take is counted on the receivable (registration_attempts,
 * registration_last_error, registration_last_attempt_at); queued receivables are found through their
 * partial index (receivables_queued_idx), never by counting the whole table.
 */

/** A charge waiting longer than this is stuck: the metric counts those, the health page marks them. */
export const STUCK_AFTER_MS = 5 * 60_000;

/** What the bank said, kept at most this long (it may quote the bank's answer). */
const MAX_REASON = 200;

export interface RegistrationWait {
  /** Our receivable id (ChargeRequest.idempotencyKey). */
  receivableId: string;
  reason: string;
}

/**
 * Records one attempt the bank did not take for each of these charges, while they are still queued:
 * the attempt count and last error on the receivable, and on attempts 1, 2, 4, 8 ... an entry in the
 * charge's history ("registration waiting (attempt n): ..."), from its state to the same state. Doubling
 * keeps the history short through an outage of days while its first minutes show attempt by attempt.
 * registration.ts may call it directly; watchRegistrationWaits calls it around each adapter.
 */
export async function recordRegistrationWaits(
  db: Kysely<ReceivablesDatabase>,
  waits: readonly RegistrationWait[],
  now = new Date(),
): Promise<void> {
  if (waits.length === 0) return;
  await db.transaction().execute(async (trx) => {
    const updated = await sql<{
      id: string;
      tenant_id: string;
      state: 'pending' | 'cancelled';
      attempts: number;
      reason: string;
    }>`
      update receivables r set registration_attempts = r.registration_attempts + 1,
        registration_last_error = v.reason, registration_last_attempt_at = ${now}
      from unnest(${waits.map((w) => w.receivableId)}::uuid[], ${waits.map((w) => w.reason.slice(0, MAX_REASON))}::text[])
        as v(id, reason)
      where r.id = v.id and r.registration_status = 'queued'
      returning r.id, r.tenant_id, r.state, r.registration_attempts as attempts, v.reason`.execute(trx);
    const entries = updated.rows.filter((r) => isPowerOfTwo(r.attempts));
    if (entries.length === 0) return;
    await trx
      .insertInto('state_history')
      .values(
        entries.map((r) => ({
          receivable_id: r.id,
          tenant_id: r.tenant_id,
          from_state: r.state,
          to_state: r.state,
          reason: waitingReason(r.attempts, r.reason),
          at: now,
        })),
      )
      .execute();
  });
}

/** The history entry of a charge the bank did not take on attempt `attempt`. */
export function waitingReason(attempt: number, reason: string): string {
  return `registration waiting (attempt ${attempt}): ${reason}`;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/**
 * The adapters, each watched: every charge a registerMany leaves unavailable (the bank unreachable, a
 * refused token or lookup, not issued yet ...) has its wait recorded. Everything else passes through
 * untouched. A wait that cannot be recorded is logged: it never fails the registration itself.
 */
export function watchRegistrationWaits(
  providers: PaymentProviders,
  db: Kysely<ReceivablesDatabase>,
  logger: Logger,
): PaymentProviders {
  const record = (waits: RegistrationWait[]) =>
    recordRegistrationWaits(db, waits).catch((err: unknown) =>
      logger.warn({ err, count: waits.length }, 'could not record charges waiting for their bank'),
    );
  const watched = {} as Record<ProviderKind, PaymentProvider>;
  for (const kind of ProviderKinds) watched[kind] = watchOne(providers[kind], record);
  return watched;
}

function watchOne(provider: PaymentProvider, record: (waits: RegistrationWait[]) => Promise<unknown>): PaymentProvider {
  const registerMany = async (account: ProviderAccount, requests: ChargeRequest[]) => {
    let outcomes: BatchRegistrationOutcome[];
    try {
      outcomes = await provider.registerMany(account, requests);
    } catch (err) {
      if (err instanceof ProviderUnavailableError)
        await record(
          requests.map((r) => ({ receivableId: r.idempotencyKey, reason: `the bank did not answer: ${err.message}` })),
        );
      throw err;
    }
    await record(
      outcomes.flatMap((o, i) => {
        const request = requests[i];
        return o.kind === 'unavailable' && request ? [{ receivableId: request.idempotencyKey, reason: o.reason }] : [];
      }),
    );
    return outcomes;
  };
  // A proxy, so whatever else the adapter offers (now or later) reaches it unchanged.
  return new Proxy(provider, {
    get(target, prop) {
      if (prop === 'registerMany') return registerMany;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Per provider kind: charges waiting longer than `stuckAfterMs` and the oldest waiting one's age (0 when none). */
export async function stuckRegistrationsByProvider(
  db: Kysely<ReceivablesDatabase>,
  now = new Date(),
  stuckAfterMs = STUCK_AFTER_MS,
): Promise<Array<{ provider: ProviderKind; stuck: number; oldestAgeSeconds: number }>> {
  const rows = await sql<{ provider: ProviderKind; stuck: string; oldest: Date | null }>`
    select coalesce(a.provider, 'sandbox') as provider,
      count(*) filter (where r.created_at < ${new Date(now.getTime() - stuckAfterMs)}) as stuck,
      min(r.created_at) as oldest
    from receivables r left join provider_accounts a on a.id = r.provider_account_id
    where r.registration_status = 'queued' and r.state = 'pending'
    group by 1`.execute(db);
  const byKind = new Map(rows.rows.map((r) => [r.provider, r]));
  return ProviderKinds.map((provider) => {
    const row = byKind.get(provider);
    return {
      provider,
      stuck: Number(row?.stuck ?? 0),
      oldestAgeSeconds: row?.oldest ? Math.max(0, Math.floor((now.getTime() - row.oldest.getTime()) / 1000)) : 0,
    };
  });
}

/** At most this many bank accounts are listed (the longest waiting first). */
const MAX_ACCOUNTS = 200;

/**
 * GET /admin/v1/registration-health (without tenant names: the gateway adds them): per bank account
 * (tenant, provider and account_key), the charges waiting for it, how many of them longer than
 * STUCK_AFTER_MS, the oldest one's age, and the bank's last answer; the longest waiting first.
 */
export async function registrationHealth(
  db: Kysely<ReceivablesDatabase>,
  now = new Date(),
  stuckAfterMs = STUCK_AFTER_MS,
): Promise<RegistrationHealthReply> {
  const rows = await sql<{
    tenant_id: string;
    provider: ProviderKind;
    account_key: string;
    base_url: string | null;
    waiting: string;
    stuck: string;
    oldest: Date;
    attempts: number;
    last_error: string | null;
    last_attempt_at: Date | null;
  }>`
    select coalesce(a.tenant_id, r.tenant_id) as tenant_id, coalesce(a.provider, 'sandbox') as provider,
      coalesce(a.account_key, 'legacy') as account_key, max(a.base_url) as base_url,
      count(*) as waiting,
      count(*) filter (where r.created_at < ${new Date(now.getTime() - stuckAfterMs)}) as stuck,
      min(r.created_at) as oldest, max(r.registration_attempts) as attempts,
      (array_agg(r.registration_last_error order by r.registration_last_attempt_at desc nulls last))[1] as last_error,
      max(r.registration_last_attempt_at) as last_attempt_at
    from receivables r left join provider_accounts a on a.id = r.provider_account_id
    where r.registration_status = 'queued' and r.state = 'pending'
    group by 1, 2, 3
    order by min(r.created_at)
    limit ${MAX_ACCOUNTS}`.execute(db);
  return {
    at: now.toISOString(),
    stuck_after_seconds: Math.round(stuckAfterMs / 1000),
    accounts: rows.rows.map((r) => ({
      tenant_id: r.tenant_id,
      provider: r.provider,
      account_key: r.account_key,
      base_url: r.base_url,
      waiting: Number(r.waiting),
      stuck: Number(r.stuck),
      oldest_since: r.oldest.toISOString(),
      oldest_age_seconds: Math.max(0, Math.floor((now.getTime() - r.oldest.getTime()) / 1000)),
      attempts: Number(r.attempts),
      last_error: r.last_error,
      last_attempt_at: r.last_attempt_at?.toISOString() ?? null,
    })),
  };
}
