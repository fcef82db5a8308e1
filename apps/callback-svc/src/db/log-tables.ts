import type { PartitionedTable } from '@payments/db';
import { sql, type Kysely } from 'kysely';

/**
 * The delivery log (migration 0009): `event_log` (every event with its body, by created_at) and
 * `attempts` (by attempted_at), partitioned by day. Daily, not monthly: at about 18 million callbacks
 * a day a day's partition is already tens of gigabytes, so a month would be most of a terabyte whose
 * indexes and vacuums span the whole month, and a monthly drop keeps up to 30 days past the retention
 * (a third more disk at 90 days). 90-odd daily partitions per table stay cheap to plan: lookups name
 * their day (event_keys) and are pruned to it.
 */
export const LOG_PERIOD = 'day';

/** Days created ahead: writes find their partition even if every instance was down for days. */
export const LOG_DAYS_AHEAD = 3;

/** Default CALLBACK_RETENTION_DAYS: delivered callbacks and their attempts are kept 90 days. */
export const DEFAULT_RETENTION_DAYS = 90;

/** The partitioned log tables, for libs/db partition maintenance. */
export function logTables(retentionDays: number): PartitionedTable[] {
  return [
    { table: 'event_log', period: LOG_PERIOD, retentionDays, ahead: LOG_DAYS_AHEAD },
    { table: 'attempts', period: LOG_PERIOD, retentionDays, ahead: LOG_DAYS_AHEAD },
  ];
}

/**
 * Per-partition settings (a partitioned parent takes none, so each new partition gets them here).
 * Log rows are written once and updated once (event_log: the status when the event leaves the queue),
 * so event_log leaves each page a tenth free for that update to stay on its page (HOT: no new index
 * entries; the columns it changes are in no index of the log). Insert-mostly tables are vacuumed
 * after 5 % new rows rather than 20 %, so a day's partition gets its visibility map and frozen pages
 * while it fills, not in one long pass after.
 */
const PARTITION_SETTINGS: Record<string, string[]> = {
  event_log: ['fillfactor=90', 'autovacuum_vacuum_insert_scale_factor=0.05', 'autovacuum_vacuum_scale_factor=0.05'],
  attempts: ['autovacuum_vacuum_insert_scale_factor=0.05'],
};

/** Gives the log's partitions that lack them their settings; answers the partitions changed. */
export async function tuneLogPartitions(db: Kysely<unknown>): Promise<string[]> {
  const changed: string[] = [];
  for (const [parent, settings] of Object.entries(PARTITION_SETTINGS)) {
    const { rows } = await sql<{ name: string }>`
      select c.relname as name from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass(${parent})
        and not coalesce(c.reloptions @> ${settings}::text[], false)`.execute(db);
    for (const { name } of rows) {
      await sql`alter table ${sql.table(name)} set (${sql.raw(settings.join(', '))})`.execute(db);
      changed.push(name);
    }
  }
  return changed;
}
