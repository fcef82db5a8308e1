import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import {
  withStreamVersion,
  type BusRegistryShape,
  type RegisteredStream,
  type StreamSpec,
  type StreamRegistry,
} from '@payments/contracts';
import { toCarrier } from '@payments/telemetry';
import type { OutboxDatabase } from './outbox-table';

/**
 * A message for the outbox: a stream of registry streams M (default: the system's, StreamRegistry in
 * libs/contracts) and the message that stream carries, as `bus.streams.publish` takes them. One
 * member per stream, so a payload that is not its stream's message does not compile.
 */
export type OutboxMessage<M extends BusRegistryShape['streams'] = StreamRegistry> = {
  [S in keyof M & string]: {
    stream: RegisteredStream<M> & { readonly subject: S };
    /** Unique per message and stable: the same logical message always gets the same id. */
    msgId: string;
    payload: M[S];
  };
}[keyof M & string];

/**
 * Records messages to publish; call it inside the transaction that makes them necessary. Each row keeps
 * the active trace context (that of the request or job doing the work), for the relay to publish with.
 * Each payload is typed by its stream (StreamRegistry; a test passes its own registry's streams as M).
 */
export async function enqueue<DB extends OutboxDatabase, M extends BusRegistryShape['streams'] = StreamRegistry>(
  trx: Transaction<DB> | Kysely<DB>,
  messages: ReadonlyArray<NoInfer<OutboxMessage<M>>>,
): Promise<void> {
  if (messages.length === 0) return;
  const db = trx as unknown as Kysely<OutboxDatabase>;
  const traceContext = activeTraceContext();
  await db
    .insertInto('outbox')
    .values(
      messages.map((m) => ({
        stream: m.stream.name,
        msg_id: m.msgId,
        payload: storedPayload(m),
        trace_context: traceContext,
      })),
    )
    .execute();
}

/** Which messages of an enqueueStatement are stored: those with at least one of their keys among `among`'s. */
export interface EnqueueCondition {
  /** Per message, in order: its keys (ids of the rows it is about). */
  readonly keys: ReadonlyArray<readonly string[]>;
  /** A query of one column: the keys that make a message needed (say, the ids an INSERT ... RETURNING wrote). */
  readonly among: RawBuilder<unknown>;
  /**
   * The payload's field that lists the message's keys, if it has one: stored with only the keys among
   * `among`, in their order, so that a message names no row its statement skipped.
   */
  readonly keysField?: string;
}

/**
 * enqueue as a statement, for the caller to run inside its own (a data-modifying WITH query): the rows
 * of a change and the messages they make necessary then go in one round trip, and one statement is one
 * transaction. With `onlyIf`, a message is stored only when one of its keys is among those the same
 * statement names (ids its insert wrote, not those it skipped). Messages are stored in their order, with
 * the active trace context, as enqueue stores them.
 */
export function enqueueStatement<M extends BusRegistryShape['streams'] = StreamRegistry>(
  messages: ReadonlyArray<NoInfer<OutboxMessage<M>>>,
  onlyIf?: EnqueueCondition,
): RawBuilder<unknown> {
  const source = sql`unnest(${messages.map((m) => m.stream.name)}::text[], ${messages.map((m) => m.msgId)}::text[],
      ${messages.map(storedPayload)}::text[]) with ordinality as m(stream, msg_id, payload, n)`;
  const columns = sql`insert into outbox (stream, msg_id, payload, trace_context)`;
  const traceContext = sql`${activeTraceContext()}::json`;
  if (!onlyIf)
    return sql`${columns} select m.stream, m.msg_id, m.payload::json, ${traceContext} from ${source} order by m.n`;
  const payload = onlyIf.keysField
    ? sql`(m.payload::jsonb || jsonb_build_object(${onlyIf.keysField}::text, to_jsonb(kept.keys)))::json`
    : sql`m.payload::json`;
  return sql`${columns}
    select m.stream, m.msg_id, ${payload}, ${traceContext}
    from ${source}
    cross join lateral (
      select array_agg(k.key order by k.i) as keys
      from unnest(${onlyIf.keys.flatMap((keys, i) => keys.map(() => i + 1))}::bigint[], ${onlyIf.keys.flat()}::text[])
        with ordinality as k(n, key, i)
      where k.n = m.n and k.key in (select a.key::text from (${onlyIf.among}) as a(key))
    ) as kept
    where kept.keys is not null
    order by m.n`;
}

/** The payload as stored, with its version: a row written here and published by another version keeps this one's. */
function storedPayload(m: { stream: StreamSpec; payload: unknown }): string {
  return JSON.stringify(withStreamVersion(m.stream, m.payload));
}

/** The trace context of the work enqueuing, as stored (null outside any trace). */
function activeTraceContext(): string | null {
  const carrier = toCarrier();
  return carrier ? JSON.stringify(carrier) : null;
}
