import {
  headers as natsHeaders,
  ErrorCode as NatsErrorCode,
  type Msg,
  type NatsConnection,
  type NatsError,
} from 'nats';
import type { Context } from '@opentelemetry/api';
import { isErrorCode, ServiceError, type BusReply } from '@payments/contracts';
import { countWork } from '@payments/metrics';
import type { PayloadCodec } from './payloads';
import { contextWith, failSpan, messagingAttributes, SpanKind, tracer, withTraceHeaders } from './tracing';

/**
 * How long the requester waits for the reply, ms: the serving side does not start a request after
 * that (responder.ts), so a request answered by a timeout cannot commit long after.
 */
export const BUS_WAIT_HEADER = 'Bus-Wait-Ms';

/** Per request: how long to wait, and the service to name when nobody answers (default: the subject's first word). */
export interface RequestOptions {
  timeoutMs?: number;
  service?: string;
}

/** The asking side of request-reply: what it is made with. */
export interface RequesterWiring {
  connection: NatsConnection;
  payloads: PayloadCodec;
  /** The absolute subject of a relative one. */
  subject(relative: string): string;
  /** Wait for a reply when the request does not say (BUS_TIMEOUT_MS). */
  timeoutMs: number;
}

/**
 * Sends a request in a CLIENT span, whose context travels in the message headers to the serving side,
 * and returns the reply's data; a failure reply is thrown as the ServiceError the serving side threw.
 */
export function requester(wiring: RequesterWiring) {
  return async function request<Req, Res>(relative: string, payload: Req, ro: RequestOptions = {}): Promise<Res> {
    const span = tracer.startSpan(`request ${relative}`, {
      kind: SpanKind.CLIENT,
      attributes: messagingAttributes(wiring.subject(relative), 'send', 'request'),
    });
    try {
      return await sendRequest<Req, Res>(wiring, relative, payload, ro, contextWith(span));
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}

async function sendRequest<Req, Res>(
  wiring: RequesterWiring,
  relative: string,
  payload: Req,
  ro: RequestOptions,
  traceContext: Context,
): Promise<Res> {
  const encoded = await wiring.payloads.encode(payload, { request: relative });
  const headers = withTraceHeaders(traceContext, encoded.headers) ?? natsHeaders();
  const timeout = ro.timeoutMs ?? wiring.timeoutMs;
  headers.set(BUS_WAIT_HEADER, String(timeout));
  let reply: Msg;
  countWork('busRequests');
  const sent = performance.now();
  try {
    reply = await wiring.connection.request(wiring.subject(relative), encoded.data, { timeout, headers });
  } catch (err) {
    throw unavailable(err, ro.service ?? relative.split('.')[0]);
  } finally {
    countWork('busRequestSeconds', (performance.now() - sent) / 1000);
  }
  return unwrapReply((await wiring.payloads.decode(reply)) as BusReply<Res>);
}

/**
 * A request that got no reply in time: a 503 like any unavailable service, but the service may have
 * received it and may still carry it out. Whoever must not run the same work twice beside it (the
 * gateway's idempotency keys) tells it apart from a request that never reached a service.
 */
export class NoReplyError extends ServiceError {
  override readonly outcomeUnknown = true;
  constructor(service: string) {
    super('service_unavailable', `the ${service} service did not answer in time`);
  }
}

/** No service listening, or none answering in time, is a 503 naming the service; other errors pass as they are. */
function unavailable(err: unknown, service: string): unknown {
  const code = (err as NatsError).code;
  if (code === NatsErrorCode.NoResponders)
    return new ServiceError('service_unavailable', `the ${service} service is not running`);
  if (code === NatsErrorCode.Timeout) return new NoReplyError(service);
  return err;
}

/** The reply's data, or the ServiceError of a failure reply (an unknown code is an internal error). */
function unwrapReply<Res>(body: BusReply<Res>): Res {
  if (body.ok) return body.data;
  const code = isErrorCode(body.error.code) ? body.error.code : 'internal_error';
  throw new ServiceError(code, body.error.detail, body.error.errors);
}
