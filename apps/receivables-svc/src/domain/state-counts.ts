import { sql, type Kysely } from 'kysely';
import { ReceivableStates, type ReceivableState } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';

/**
 * Charges by state, every state present (0 when none): the folded counts plus the changes appended
 * since the last fold. Reads those two small tables only, never the receivables (migration 0016
 * keeps them by triggers on receivables, in the transaction of each change).
 */
export async function chargesByState(db: Kysely<ReceivablesDatabase>): Promise<Map<ReceivableState, number>> {
  const { rows } = await sql<{ state: ReceivableState; count: string }>`
    select state, sum(n) as count from (
      select state, count as n from state_counts
      union all
      select state, delta from state_count_changes
    ) c group by state`.execute(db);
  const counts = new Map<ReceivableState, number>(ReceivableStates.map((s) => [s, 0]));
  for (const r of rows) counts.set(r.state, Number(r.count));
  return counts;
}

/**
 * Moves the appended changes into the counts and deletes them, so that a read stays a few rows. One
 * instance at a time (the others skip this round); changes committed meanwhile wait for the next.
 * Returns how many changes were folded.
 */
export async function foldStateCounts(db: Kysely<ReceivablesDatabase>): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{ got: boolean }>`
      select pg_try_advisory_xact_lock(hashtext('receivables:state-counts')) as got`.execute(trx);
    if (lock.rows[0]?.got !== true) return 0;
    const { rows } = await sql<{ folded: string }>`
      with gone as (delete from state_count_changes returning state, delta),
      summed as (select state, sum(delta) as delta, count(*) as changes from gone group by state),
      applied as (
        insert into state_counts (state, count) select state, delta from summed
        on conflict (state) do update set count = state_counts.count + excluded.count
        returning state
      )
      select coalesce(sum(changes), 0) as folded from summed where state in (select state from applied)`.execute(trx);
    return Number(rows[0]?.folded ?? 0);
  });
}
