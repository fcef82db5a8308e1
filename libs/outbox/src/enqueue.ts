import type { Kysely, Transaction } from 'kysely';
import {
  withStreamVersion,
  type BusRegistryShape,
  type RegisteredStream,
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
  const carrier = toCarrier();
  const traceContext = carrier ? JSON.stringify(carrier) : null;
  await db
    .insertInto('outbox')
    .values(
      messages.map((m) => ({
        stream: m.stream.name,
        msg_id: m.msgId,
        // With its version: a row written here and published by another version keeps this one's.
        payload: JSON.stringify(withStreamVersion(m.stream, m.payload)),
        trace_context: traceContext,
      })),
    )
    .execute();
}
