import { sql, type ColumnType, type Generated, type Kysely, type Migration } from 'kysely';
import type { TraceCarrier } from '@payments/telemetry';

/**
 * Transactional outbox: work that must follow a state change (a registration job, a callback) is
 * written in the same transaction as the change, and a relay publishes it to JetStream afterwards.
 * Nothing is lost if the process dies between the commit and the publish.
 */
export interface OutboxTable {
  id: Generated<string>;
  /** StreamSpec.name of the stream to publish to. */
  stream: string;
  /** Nats-Msg-Id: lets JetStream drop a message published twice (relay crash after publish). */
  msg_id: string;
  payload: ColumnType<unknown, string, string>;
  /**
   * W3C trace context of the transaction that enqueued the row (null when there was none): the relay
   * publishes with it, so the consumer's work joins the trace of the request that caused it.
   */
  trace_context: ColumnType<TraceCarrier | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
}

export interface OutboxDatabase {
  outbox: OutboxTable;
}

/** Add to a service's migrations: creates its outbox table in its own schema. */
export const outboxMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('outbox')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('msg_id', 'text', (c) => c.notNull())
      // json, not jsonb: keeps the payload's key order, as the callback's receiver will read it.
      .addColumn('payload', 'json', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};

/**
 * Add to a service's migrations after outboxMigration: the trace context column. A migration of its
 * own (services that already ran outboxMigration must not run it again); nullable, so rows enqueued
 * before it, or outside any trace, are published as before.
 */
export const outboxTraceContextMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('outbox').addColumn('trace_context', 'json').execute();
  },
};
