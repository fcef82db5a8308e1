import { sql, type Kysely } from 'kysely';
import type { OutboxDatabase } from './outbox-table';

/** Outbox rows not yet published, per stream (for a queue-depth gauge; an empty outbox gives []). */
export async function outboxBacklog<DB extends OutboxDatabase>(
  db: Kysely<DB>,
): Promise<Array<{ stream: string; waiting: number }>> {
  // Any service database that contains the outbox table (kysely's types are invariant in the table map).
  const outbox = db as unknown as Kysely<OutboxDatabase>;
  const rows = await outbox
    .selectFrom('outbox')
    .select((eb) => ['stream', eb.fn.countAll<number>().as('waiting')])
    .groupBy('stream')
    .execute();
  return rows.map((r) => ({ stream: r.stream, waiting: Number(r.waiting) }));
}

/** The whole outbox at a glance: what waits, how long the oldest row has waited, how many rows failed to publish. */
export interface OutboxBacklogSummary {
  rows: number;
  /** Rows whose last publish failed (waiting for their next attempt). */
  failing: number;
  /** Age of the oldest row, seconds; 0 when the outbox is empty. */
  oldestAgeSeconds: number;
}

/** One aggregate query over the outbox (for gauges and the near-limit warning). */
export async function outboxBacklogSummary<DB extends OutboxDatabase>(db: Kysely<DB>): Promise<OutboxBacklogSummary> {
  const outbox = db as unknown as Kysely<OutboxDatabase>;
  const row = await outbox
    .selectFrom('outbox')
    .select((eb) => [
      eb.fn.countAll<string>().as('rows'),
      sql<string>`count(*) filter (where attempts > 0)`.as('failing'),
      sql<string | null>`extract(epoch from now() - min(created_at))`.as('oldest'),
    ])
    .executeTakeFirstOrThrow();
  return {
    rows: Number(row.rows),
    failing: Number(row.failing),
    oldestAgeSeconds: row.oldest === null ? 0 : Math.max(0, Number(row.oldest)),
  };
}
