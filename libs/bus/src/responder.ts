import type { Msg, MsgHdrs, NatsConnection, Subscription } from 'nats';
import { context, type Span } from '@opentelemetry/api';
import { ErrorCatalog, ServiceError, type BusReply } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { countWork } from '@payments/metrics';
import { extractFromHeaders, MessagingAttributes } from '@payments/telemetry';
import type { PayloadCodec } from './payloads';
import { BUS_WAIT_HEADER } from './requester';
import { ServeSlots, type SlotOutcome } from './serve-slots';
import { contextWith, failSpan, messagingAttributes, SpanKind, tracer } from './tracing';

export interface ServeOptions {
  /** Queue group: instances of one service share the work. */
  queue: string;
}

export type RequestHandler<Req, Res> = (request: Req, context: { subject: string; headers?: MsgHdrs }) => Promise<Res>;

/** The serving side of request-reply: what it is made with. */
export interface ResponderWiring {
  connection: NatsConnection;
  payloads: PayloadCodec;
  /** The absolute subject of a relative one. */
  subject(relative: string): string;
  log: Logger;
  /** Handlers run at once over every subject served (BUS_SERVE_CONCURRENCY); see ServeSlots. */
  concurrency: number;
}

/**
 * Answers requests: each subject served by a queue group, each request in a SERVER span (child of the
 * requester's) and answered with a BusReply. `drain` stops taking requests and waits for those in flight.
 */
export function responder(wiring: ResponderWiring) {
  const subscriptions: Subscription[] = [];
  const inFlight = new Set<Promise<void>>();
  const slots = new ServeSlots(wiring.concurrency);

  function serve<Req, Res>(relative: string, handler: RequestHandler<Req, Res>, so: ServeOptions): Subscription {
    const sub = wiring.connection.subscribe(wiring.subject(relative), {
      queue: so.queue,
      callback: (err, msg) => {
        if (err) {
          wiring.log.error({ err, subject: relative }, 'subscription error');
          return;
        }
        const deadline = Date.now() + (waitOf(msg.headers) ?? Number.POSITIVE_INFINITY);
        const arrived = performance.now();
        const work = slots
          .run(deadline, () => handle(wiring, msg, relative, handler, so.queue))
          .then((outcome) => refused(wiring, msg, relative, outcome))
          .finally(() => {
            inFlight.delete(work);
            countWork('busServed');
            countWork('busServeSeconds', (performance.now() - arrived) / 1000);
          });
        inFlight.add(work);
      },
    });
    subscriptions.push(sub);
    return sub;
  }

  async function drain(): Promise<void> {
    await Promise.all(subscriptions.map((s) => s.drain().catch(() => undefined)));
    await Promise.allSettled([...inFlight]);
  }

  return { serve, drain };
}

/**
 * How long the requester waits for the reply (its BUS_WAIT_HEADER), counted from arrival here: a
 * duration, not a time, so the two machines' clocks need not agree.
 */
function waitOf(headers: MsgHdrs | undefined): number | undefined {
  const ms = Number(headers?.get(BUS_WAIT_HEADER));
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** A request that did not run: busy is answered (503, retry later); expired is dropped, as nobody waits. */
async function refused(wiring: ResponderWiring, msg: Msg, relative: string, outcome: SlotOutcome): Promise<void> {
  if (outcome === 'ran') return;
  if (outcome === 'expired') {
    wiring.log.warn({ subject: relative }, 'request dropped unstarted: its requester stopped waiting');
    return;
  }
  wiring.log.warn({ subject: relative }, 'request refused: every handler slot is taken and the queue is full');
  if (!msg.reply || !isInbox(msg.reply)) return;
  const reply: BusReply<never> = {
    ok: false,
    error: { code: 'service_unavailable', detail: 'the service is busy; retry later' },
  };
  const { data, headers } = await wiring.payloads.encode(reply, { replyTo: msg.reply });
  msg.respond(data, { headers });
}

/** Serves one request in a SERVER span, child of the requester's span carried in the headers. */
async function handle<Req, Res>(
  wiring: ResponderWiring,
  msg: Msg,
  relative: string,
  handler: RequestHandler<Req, Res>,
  queue: string,
): Promise<void> {
  const parent = extractFromHeaders(msg.headers);
  const span = tracer.startSpan(
    `process ${relative}`,
    {
      kind: SpanKind.SERVER,
      attributes: messagingAttributes(msg.subject, 'process', 'serve', {
        [MessagingAttributes.consumerGroup]: queue,
        [MessagingAttributes.bodySize]: msg.data.length,
      }),
    },
    parent,
  );
  try {
    await context.with(contextWith(span, parent), () => answer(wiring, msg, relative, handler, span));
  } finally {
    span.end();
  }
}

async function answer<Req, Res>(
  wiring: ResponderWiring,
  msg: Msg,
  relative: string,
  handler: RequestHandler<Req, Res>,
  span: Span,
): Promise<void> {
  if (msg.reply && !isInbox(msg.reply)) {
    // A reply subject naming a request or stream subject would make this service publish there on
    // the asker's behalf (allow_responses lets it): serve only requests whose replies go to an inbox.
    wiring.log.warn({ subject: relative }, 'request with a reply subject that is not an inbox: refused');
    span.setAttribute('error.type', 'reply_not_inbox');
    return;
  }
  let reply: BusReply<Res>;
  try {
    const request = (await wiring.payloads.decode(msg)) as Req;
    reply = { ok: true, data: await handler(request, { subject: relative, headers: msg.headers }) };
  } catch (err) {
    reply = failureReply(wiring.log, err, relative, span);
  }
  if (!msg.reply) return;
  const replyTo = msg.reply;
  try {
    const { data, headers } = await wiring.payloads.encode(reply, { replyTo });
    msg.respond(data, { headers });
  } catch (err) {
    // A large reply that could not be put aside (its asker's claim store missing, full or unknown):
    // the asker gets the reason now, not a timeout later.
    wiring.log.error({ err, subject: relative }, 'could not send reply');
    await sendFailure(wiring, msg, replyTo, failureReply(wiring.log, err, relative, span));
  }
}

/** A failure reply, small enough never to need a claim check. */
async function sendFailure(wiring: ResponderWiring, msg: Msg, replyTo: string, reply: BusReply<never>): Promise<void> {
  try {
    const { data, headers } = await wiring.payloads.encode(reply, { replyTo });
    msg.respond(data, { headers });
  } catch (err) {
    wiring.log.error({ err, subject: msg.subject }, 'could not send the failure reply either');
  }
}

/** Reply inboxes: nats.js's `_INBOX.` or a service's own `_INBOX_<name>.` (inboxPrefixOf). */
function isInbox(subject: string): boolean {
  return subject.startsWith('_INBOX.') || subject.startsWith('_INBOX_');
}

/** A ServiceError travels back with its code; anything else is an internal error, logged here, its details kept. */
function failureReply(log: Logger, err: unknown, relative: string, span: Span): BusReply<never> {
  if (err instanceof ServiceError) {
    // The caller's mistake (not found, invalid...) is an answer; only our own failures mark the span.
    if (ErrorCatalog[err.code].status >= 500) failSpan(span, err);
    else span.setAttribute('error.type', err.code);
    return { ok: false, error: { code: err.code, detail: err.detail, errors: err.errors } };
  }
  failSpan(span, err);
  log.error({ err, subject: relative }, 'request handler failed');
  return { ok: false, error: { code: 'internal_error', detail: 'an unexpected error occurred' } };
}
