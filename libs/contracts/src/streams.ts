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
  callbackRequests: { name: 'callbacks', subject: 'callbacks.requested', consumer: 'callback-svc', duplicateWindowMs: 10 * 60_000 },
} as const satisfies Record<string, StreamSpec>;
