import type { Kysely, Transaction } from 'kysely';
import type { StreamSpec } from '@payments/contracts';
import { toCarrier } from '@payments/telemetry';
import type { OutboxDatabase } from './outbox-table';

export interface OutboxMessage {
  stream: StreamSpec;
  /** Unique per message and stable: the same logical message always gets the same id. */
  msgId: string;
  payload: unknown;
}

/**
 * Records messages to publish; call it inside the transaction that makes them necessary. Each row keeps
 * the active trace context (that of the request or job doing the work), for the relay to publish with.
 */
export async function enqueue<DB extends OutboxDatabase>(
  trx: Transaction<DB> | Kysely<DB>,
  messages: OutboxMessage[],
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
        payload: JSON.stringify(m.payload),
        trace_context: traceContext,
      })),
    )
    .execute();
}
