import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Uuid } from './common';
import { MESSAGE_VERSION_FIELD, formatVersion, UNVERSIONED, type MessageVersion } from './message-versions';

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
  /**
   * The version of the message its producers write now (message-versions.ts); its readers take any
   * minor of this major. Raise the minor for an added optional field; default 1.0.
   */
  version?: MessageVersion;
}

/**
 * Job on Streams.receivableRegistrations: register these receivables (one intake's chunk) with the provider.
 * 1.1 added `queued_at`; a 1.0 job (from an instance not yet upgraded) has none.
 */
export const RegistrationJobSchema = Type.Object(
  {
    tenant_id: Uuid(),
    receivable_ids: Type.Array(Uuid(), { minItems: 1, maxItems: 1_000 }),
    /** When the intake queued the chunk (since 1.1): its wait in the stream is the worker's start minus this. */
    queued_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
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
    version: { major: 1, minor: 1 },
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

/** The version a stream's messages are written with now. */
export function streamVersion(spec: StreamSpec): MessageVersion {
  return spec.version ?? UNVERSIONED;
}

/**
 * A stream message as its producer writes it: the payload with its stream's version in the body
 * (MESSAGE_VERSION_FIELD), so the version stays with the message through the outbox and every retry.
 * Every stream message is a JSON object; anything else is left as it is (read as 1.0).
 */
export function withStreamVersion(spec: StreamSpec, payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  return { ...payload, [MESSAGE_VERSION_FIELD]: formatVersion(streamVersion(spec)) };
}

/**
 * What a job handler came to: `done` (the message is acked and leaves the stream), to be tried again
 * after a delay (the message is redelivered then), or `deadLetter`: it cannot be handled as it is (a
 * malformed part of it), so it goes to the dead letters at once with that reason, to be listed and
 * re-driven by an operator. Every consumer of a stream answers with one.
 */
export type JobOutcome = 'done' | { retryInMs: number } | { deadLetter: string };
