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
}

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
  },
  bookletBuilds: {
    name: 'booklets',
    subject: 'booklets.build',
    consumer: 'booklet-worker',
    duplicateWindowMs: 10 * 60_000,
  },
  receivableCancellations: {
    name: 'cancellations',
    subject: 'receivables.cancellation',
    consumer: 'cancellation-worker',
    duplicateWindowMs: 10 * 60_000,
  },
} as const satisfies Record<string, StreamSpec>;

/**
 * What a job handler came to: `done` (the message is acked and leaves the stream), or to be tried again
 * after a delay (the message is redelivered then). Every consumer of a stream answers with one.
 */
export type JobOutcome = 'done' | { retryInMs: number };

/** Job on Streams.receivableRegistrations: register these receivables (one intake's chunk) with the provider. */
export interface RegistrationJob {
  tenant_id: string;
  receivable_ids: string[];
}

/** Job on Streams.receivableCancellations: cancel at the provider (on request, or a charge registered after its receivable was cancelled). */
export interface CancellationJob {
  tenant_id: string;
  receivable_id: string;
  /** `requested`: the ERP asked, a callback follows; `cleanup`: no callback. */
  reason: 'requested' | 'cleanup';
}

/** Job on Streams.bookletBuilds: build this booklet request's PDF. */
export interface BookletJob {
  tenant_id: string;
  booklet_id: string;
}
