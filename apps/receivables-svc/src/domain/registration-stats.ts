import { sql, type Kysely } from 'kysely';
import {
  STATS_RETENTION_DAYS,
  statsBuckets,
  type RegistrationStats,
  type RegistrationStatsCommand,
} from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';

/**
 * Registration statistics (GET /admin/v1/stats/registrations): per tenant and minute, how
 * many charges the provider registered (receivables.registered_at) and how many it refused for good
 * (a state_history row to `rejected`: a permanent refusal is the only way there; an unavailable
 * provider is retried). A rollup re-aggregates the last minutes from those rows into
 * registrations_per_minute; the statistics read only that table.
 */

/** How far back each rollup re-aggregates: a registration committed up to this late is still counted. */
export const ROLLUP_LOOKBACK_MINUTES = 2;

const MINUTE_MS = 60_000;

export interface RollupResult {
  /** False when another instance held the rollup: it does the work, this one did nothing. */
  ran: boolean;
}

/**
 * One rollup: the minutes from ROLLUP_LOOKBACK_MINUTES before `now`'s minute on are counted again
 * from the source rows and replace what was stored (so a re-run changes nothing), and minutes older
 * than the retention are deleted. Any instance may call it at any time: a transaction-scoped advisory
 * lock (per schema) lets one at a time work, the others skip.
 */
export async function rollUpRegistrations(db: Kysely<ReceivablesDatabase>, now = new Date()): Promise<RollupResult> {
  const since = new Date(Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - ROLLUP_LOOKBACK_MINUTES * MINUTE_MS);
  const keepFrom = new Date(now.getTime() - STATS_RETENTION_DAYS * 24 * 60 * MINUTE_MS);
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(hashtext('receivables.registration-rollup:' || current_schema())) as locked`.execute(
      trx,
    );
    if (!lock.rows[0]?.locked) return { ran: false };
    // date_trunc on UTC: minutes are absolute whatever the session's time zone.
    await sql`
      insert into registrations_per_minute (minute, tenant_id, registered, failed)
      select minute, tenant_id, sum(registered), sum(failed)
      from (
        select date_trunc('minute', registered_at at time zone 'UTC') at time zone 'UTC' as minute, tenant_id,
          count(*) as registered, 0 as failed
        from receivables where registered_at >= ${since} group by 1, 2
        union all
        select date_trunc('minute', at at time zone 'UTC') at time zone 'UTC', tenant_id, 0, count(*)
        from state_history where to_state = 'rejected' and from_state is distinct from to_state and at >= ${since} group by 1, 2
      ) counted
      group by minute, tenant_id
      on conflict (minute, tenant_id) do update set registered = excluded.registered, failed = excluded.failed`.execute(
      trx,
    );
    await trx.deleteFrom('registrations_per_minute').where('minute', '<', keepFrom).execute();
    return { ran: true };
  });
}

/** Every bucket of the window (zeros included), oldest first; a tenant's, or everyone's without one. */
export async function registrationStats(
  db: Kysely<ReceivablesDatabase>,
  cmd: RegistrationStatsCommand,
  now = new Date(),
): Promise<RegistrationStats> {
  const { from, to, bucketSeconds, starts } = statsBuckets(cmd.window, now);
  let q = db
    .selectFrom('registrations_per_minute')
    .select([
      sql<string>`floor(extract(epoch from minute) / ${bucketSeconds})::bigint * ${bucketSeconds}`.as('bucket'),
      sql<string>`sum(registered)`.as('registered'),
      sql<string>`sum(failed)`.as('failed'),
    ])
    .where('minute', '>=', from)
    .where('minute', '<', to);
  if (cmd.tenant_id !== undefined) q = q.where('tenant_id', '=', cmd.tenant_id);
  const rows = await q.groupBy('bucket').execute();
  const byStart = new Map(rows.map((r) => [Number(r.bucket) * 1000, r]));
  return {
    window: cmd.window,
    bucket_seconds: bucketSeconds,
    from: from.toISOString(),
    to: to.toISOString(),
    series: starts.map((at) => {
      const row = byStart.get(at.getTime());
      return { at: at.toISOString(), registered: Number(row?.registered ?? 0), failed: Number(row?.failed ?? 0) };
    }),
  };
}
