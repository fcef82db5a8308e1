import { sql, type Kysely } from 'kysely';
import type { ReceivablesDatabase } from './schema';

/**
 * How long the bank's word is kept: the notices it sent (bank_notice_log, by month), the ids of the
 * events applied (provider_events, each counted once) and reconciliation's dedup keys
 * (bank_notice_keys). 400 days: far beyond the 60 days reconciliation looks back and the days a bank
 * retries a notice (an event id must outlive every repeat of its event), and a year and a month of
 * support questions ("what did the bank say, and when?") and of matching against the bank's
 * statements. What was applied stays for 5 years in the state history.
 */
export const NOTICE_RETENTION_DAYS = 400;

/** Rows deleted per statement, and statements per run: an hour of peak traffic's worth and more. */
const BATCH = 5_000;
const MAX_BATCHES_PER_RUN = 400;
const DAY_MS = 86_400_000;

/** What one run deleted, per table. */
export interface NoticePruning {
  providerEvents: number;
  noticeKeys: number;
}

/**
 * Deletes provider events and notice keys older than the retention, a batch per statement. These are
 * key tables: their rows name no time in their unique key, which a table partitioned by time cannot
 * keep unique, so they are pruned by rows (docs/architecture.md, Receivables over the years); the
 * notices themselves go with their log's months. One instance at a time: the others skip the run.
 */
export async function pruneNotices(
  db: Kysely<ReceivablesDatabase>,
  opts: { now?: Date; retentionDays?: number; stopping?: () => boolean } = {},
): Promise<NoticePruning> {
  const now = opts.now ?? new Date();
  const retentionDays = opts.retentionDays ?? NOTICE_RETENTION_DAYS;
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  const result: NoticePruning = { providerEvents: 0, noticeKeys: 0 };
  // A stopping service waits for one batch at most.
  for (let i = 0; i < MAX_BATCHES_PER_RUN && opts.stopping?.() !== true; i++) {
    const batch = await db.transaction().execute(async (trx) => {
      const lock = await sql<{ got: boolean }>`
        select pg_try_advisory_xact_lock(hashtext('receivables:notice-retention')) as got`.execute(trx);
      if (lock.rows[0]?.got !== true) return undefined;
      const events = await sql`delete from provider_events where ctid = any(array(
          select ctid from provider_events where received_at < ${cutoff} limit ${BATCH}))`.execute(trx);
      const keys = await sql`delete from bank_notice_keys where ctid = any(array(
          select ctid from bank_notice_keys where received_at < ${cutoff} limit ${BATCH}))`.execute(trx);
      return { providerEvents: Number(events.numAffectedRows ?? 0), noticeKeys: Number(keys.numAffectedRows ?? 0) };
    });
    if (batch === undefined) break;
    result.providerEvents += batch.providerEvents;
    result.noticeKeys += batch.noticeKeys;
    if (batch.providerEvents < BATCH && batch.noticeKeys < BATCH) break;
  }
  return result;
}
