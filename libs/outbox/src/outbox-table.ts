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
  /** Failed publishes of this row (outboxRetryMigration); 0 until one fails. */
  attempts: Generated<number>;
  /** Why its last publish failed (unknown stream, too large, stream full ...), for an operator. */
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Not published again before this (backoff after a failure); null: due now. */
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
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

/**
 * Add to a service's migrations after outboxTraceContextMigration: per-row failure isolation. A row
 * that cannot be published (a stream no longer declared, a message over NATS's max_payload, a full
 * stream) counts its attempts, keeps its last error and waits for its next attempt, while the rows
 * behind it are published.
 */
export const outboxRetryMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('outbox')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('next_attempt_at', 'timestamptz')
      .execute();
  },
};
