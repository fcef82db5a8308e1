import {
  connect,
  ErrorCode as NatsErrorCode,
  headers as natsHeaders,
  JSONCodec,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type NatsError,
  type Subscription,
} from 'nats';
import { context, type Context, type Span } from '@opentelemetry/api';
import { ErrorCatalog, ServiceError, isErrorCode, type BusReply } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { extractFromHeaders, MessagingAttributes } from '@payments/telemetry';
import { ClaimCheck, CLAIM_HEADER } from './claim-check';
import { DurableStreams } from './streams';
import { explainNatsConnectError, requireJetStream } from './unavailable';
import { contextWith, failSpan, messagingAttributes, SpanKind, tracer, withTraceHeaders } from './tracing';

export interface BusOptions {
  /** The NATS server (NATS_URL). */
  url: string;
  /** Prefix of every subject of this deployment (BUS_PREFIX). */
  prefix: string;
  /** Connection name, shown by the NATS server's monitoring. */
  name: string;
  logger: Logger;
  /** Default wait for a reply (BUS_TIMEOUT_MS); 10 s when not given. */
  timeoutMs?: number;
  /** Payloads larger than this go by claim check; default: the server's max_payload minus 64 KiB. */
  claimCheckThreshold?: number;
}

export interface ServeOptions {
  /** Queue group: instances of one service share the work. */
  queue: string;
}

export type RequestHandler<Req, Res> = (request: Req, context: { subject: string; headers?: MsgHdrs }) => Promise<Res>;

export interface Bus {
  readonly connection: NatsConnection;
  readonly prefix: string;
  subject(relative: string): string;
  /** JetStream: durable work queues and events. */
  readonly streams: DurableStreams;
  /** Sends a request and returns the reply's data; a failure reply is thrown as a ServiceError. */
  request<Req, Res>(subject: string, payload: Req, opts?: { timeoutMs?: number; service?: string }): Promise<Res>;
  /** Answers requests on a subject; a thrown ServiceError travels back with its code. */
  serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, opts: ServeOptions): Subscription;
  /** Stops taking requests, waits for the ones in flight to answer, then closes the connection. */
  close(): Promise<void>;
}

const codec = JSONCodec<unknown>();

export async function connectBus(opts: BusOptions): Promise<Bus> {
  const connection = await connect({
    servers: opts.url,
    name: opts.name,
    maxReconnectAttempts: -1,
    // No stack capture per request: measurable on hot paths (JetStream publishes, pulls).
    noAsyncTraces: true,
    reconnectTimeWait: 500,
  }).catch((err: unknown) => {
    // NATS out of reach at start-up: one line naming NATS_URL and the fix, rather than a NatsError stack.
    throw explainNatsConnectError(err, opts.url);
  });
  await requireJetStream(connection, opts.url).catch(async (err: unknown) => {
    await connection.close().catch(() => undefined);
    throw err;
  });
  const log = opts.logger.child({ component: 'bus' });
  const claims = new ClaimCheck(connection.jetstream(), `${opts.prefix}_claims`);
  const threshold = opts.claimCheckThreshold ?? Math.max(1024, connection.info!.max_payload - 64 * 1024);
  const subscriptions: Subscription[] = [];
  const inFlight = new Set<Promise<void>>();
  const subject = (relative: string) => `${opts.prefix}.${relative}`;

  async function encode(value: unknown): Promise<{ data: Uint8Array; headers?: MsgHdrs }> {
    const data = codec.encode(value);
    if (data.length <= threshold) return { data };
    const headers = natsHeaders();
    headers.set(CLAIM_HEADER, await claims.put(data));
    return { data: new Uint8Array(0), headers };
  }

  async function decode(msg: Msg): Promise<unknown> {
    const claim = msg.headers?.get(CLAIM_HEADER);
    return codec.decode(claim ? await claims.take(claim) : msg.data);
  }

  /** A request in a CLIENT span whose context travels in the message headers to the serving side. */
  async function request<Req, Res>(
    relative: string,
    payload: Req,
    ro: { timeoutMs?: number; service?: string } = {},
  ): Promise<Res> {
    const span = tracer.startSpan(`request ${relative}`, {
      kind: SpanKind.CLIENT,
      attributes: messagingAttributes(subject(relative), 'send', 'request'),
    });
    try {
      return await sendRequest<Req, Res>(relative, payload, ro, contextWith(span));
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  async function sendRequest<Req, Res>(
    relative: string,
    payload: Req,
    ro: { timeoutMs?: number; service?: string },
    traceContext: Context,
  ): Promise<Res> {
    const encoded = await encode(payload);
    const headers = withTraceHeaders(traceContext, encoded.headers);
    const who = ro.service ?? relative.split('.')[0];
    let reply: Msg;
    try {
      reply = await connection.request(subject(relative), encoded.data, {
        timeout: ro.timeoutMs ?? opts.timeoutMs ?? 10_000,
        headers,
      });
    } catch (err) {
      const code = (err as NatsError).code;
      if (code === NatsErrorCode.NoResponders)
        throw new ServiceError('service_unavailable', `the ${who} service is not running`);
      if (code === NatsErrorCode.Timeout)
        throw new ServiceError('service_unavailable', `the ${who} service did not answer in time`);
      throw err;
    }
    const body = (await decode(reply)) as BusReply<Res>;
    if (body.ok) return body.data;
    const code = isErrorCode(body.error.code) ? body.error.code : 'internal_error';
    throw new ServiceError(code, body.error.detail, body.error.errors);
  }

  function serve<Req, Res>(relative: string, handler: RequestHandler<Req, Res>, so: ServeOptions): Subscription {
    const sub = connection.subscribe(subject(relative), {
      queue: so.queue,
      callback: (err, msg) => {
        if (err) {
          log.error({ err, subject: relative }, 'subscription error');
          return;
        }
        const work = handle(msg, relative, handler, so.queue).finally(() => inFlight.delete(work));
        inFlight.add(work);
      },
    });
    subscriptions.push(sub);
    return sub;
  }

  /** Serves one request in a SERVER span, child of the requester's span carried in the headers. */
  async function handle<Req, Res>(
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
      await context.with(contextWith(span, parent), () => answer(msg, relative, handler, span));
    } finally {
      span.end();
    }
  }

  async function answer<Req, Res>(
    msg: Msg,
    relative: string,
    handler: RequestHandler<Req, Res>,
    span: Span,
  ): Promise<void> {
    let reply: BusReply<Res>;
    try {
      const request = (await decode(msg)) as Req;
      reply = { ok: true, data: await handler(request, { subject: relative, headers: msg.headers }) };
    } catch (err) {
      if (err instanceof ServiceError) {
        // The caller's mistake (not found, invalid...) is an answer; only our own failures mark the span.
        if (ErrorCatalog[err.code].status >= 500) failSpan(span, err);
        else span.setAttribute('error.type', err.code);
        reply = { ok: false, error: { code: err.code, detail: err.detail, errors: err.errors } };
      } else {
        failSpan(span, err);
        log.error({ err, subject: relative }, 'request handler failed');
        reply = { ok: false, error: { code: 'internal_error', detail: 'an unexpected error occurred' } };
      }
    }
    if (!msg.reply) return;
    try {
      const { data, headers } = await encode(reply);
      msg.respond(data, { headers });
    } catch (err) {
      log.error({ err, subject: relative }, 'could not send reply');
    }
  }

  async function close(): Promise<void> {
    await Promise.all(subscriptions.map((s) => s.drain().catch(() => undefined)));
    await Promise.allSettled([...inFlight]);
    if (!connection.isClosed()) await connection.drain().catch(() => undefined);
  }

  const streams = new DurableStreams(connection, opts.prefix, log);
  return { connection, prefix: opts.prefix, subject, streams, request, serve, close };
}
