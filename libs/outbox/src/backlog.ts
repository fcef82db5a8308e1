import type { Kysely } from 'kysely';
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
