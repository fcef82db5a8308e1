import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Uuid } from './common';

/**
 * JetStream streams (durable work and events). Names and subjects are relative to the bus prefix,
 * like the request-reply subjects: the stream of prefix `pay` is `pay_callbacks` on `pay.callbacks.requested`.
 */
export interface StreamSpec {
  /** Suffix of the stream name: `<prefix>_<name>`. */
  name: string;
  /** Subject relative to the prefix. */
  subject: string;
  /** Durable consumer of the service that does the work. */
  consumer: string;
  /** De-duplication window for Nats-Msg-Id, ms. */
  duplicateWindowMs: number;
  /**
   * The schema of a job message: a message that does not match it (or is not JSON) is poison, dead-
   * lettered at once without reaching the handler. None: any JSON reaches the handler.
   */
  messageSchema?: TSchema;
}

/** Job on Streams.receivableRegistrations: register these receivables (one intake's chunk) with the provider. */
export const RegistrationJobSchema = Type.Object(
  { tenant_id: Uuid(), receivable_ids: Type.Array(Uuid(), { minItems: 1, maxItems: 1_000 }) },
  { $id: 'RegistrationJob' },
);
export type RegistrationJob = Static<typeof RegistrationJobSchema>;

/** Job on Streams.receivableCancellations: cancel at the provider (on request, or a charge registered after its receivable was cancelled). */
export const CancellationJobSchema = Type.Object(
  {
    tenant_id: Uuid(),
    receivable_id: Uuid(),
    /** `requested`: the ERP asked, a callback follows; `cleanup`: no callback. */
    reason: Type.Union([Type.Literal('requested'), Type.Literal('cleanup')]),
  },
  { $id: 'CancellationJob' },
);
export type CancellationJob = Static<typeof CancellationJobSchema>;

/** Job on Streams.bookletBuilds: build this booklet request's PDF. */
export const BookletJobSchema = Type.Object({ tenant_id: Uuid(), booklet_id: Uuid() }, { $id: 'BookletJob' });
export type BookletJob = Static<typeof BookletJobSchema>;

export const Streams = {
  callbackRequests: {
    name: 'callbacks',
    subject: 'callbacks.requested',
    consumer: 'callback-svc',
    duplicateWindowMs: 10 * 60_000,
  },
  receivableRegistrations: {
    name: 'registrations',
    subject: 'receivables.registration',
    consumer: 'registration-worker',
    duplicateWindowMs: 10 * 60_000,
    messageSchema: RegistrationJobSchema,
  },
  bookletBuilds: {
    name: 'booklets',
    subject: 'booklets.build',
    consumer: 'booklet-worker',
    duplicateWindowMs: 10 * 60_000,
    messageSchema: BookletJobSchema,
  },
  receivableCancellations: {
    name: 'cancellations',
    subject: 'receivables.cancellation',
    consumer: 'cancellation-worker',
    duplicateWindowMs: 10 * 60_000,
    messageSchema: CancellationJobSchema,
  },
} as const satisfies Record<string, StreamSpec>;

/**
 * What a job handler came to: `done` (the message is acked and leaves the stream), to be tried again
 * after a delay (the message is redelivered then), or `deadLetter`: it cannot be handled as it is (a
 * malformed part of it), so it goes to the dead letters at once with that reason, to be listed and
 * re-driven by an operator. Every consumer of a stream answers with one.
 */
export type JobOutcome = 'done' | { retryInMs: number } | { deadLetter: string };
