import type { NatsConnection, Subscription } from 'nats';
import type { BusRegistry, BusRegistryShape, ReplyOf, RequestOf, RequestSubject } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import type { NatsCredentials } from './auth';
import { openConnection } from './connection';
import { payloadCodec, SystemClaimRouting, type ClaimRouting } from './payloads';
import { requester, type RequestOptions } from './requester';
import { responder, type RequestHandler, type ServeOptions } from './responder';
import { DurableStreams } from './streams';
import type { Consumption } from './job-handlers';
import type { StreamSettings } from './stream-settings';

export type { RequestHandler, RequestOptions, ServeOptions, Subscription };

export interface BusOptions<R extends BusRegistryShape = BusRegistry> {
  /** The NATS server, or a comma-separated list of a cluster's (NATS_URL). */
  url: string;
  /** Prefix of every subject of this deployment (BUS_PREFIX). */
  prefix: string;
  /**
   * The service's name: the connection's name in the server's monitoring, and its reply inboxes
   * (`_INBOX_<name>`, which the server config lets only this service's user read).
   */
  name: string;
  /** The service's login and TLS (its config's NATS_* fields); none: an unauthenticated, plain NATS. */
  credentials?: NatsCredentials;
  logger: Logger;
  /** Default wait for a reply (BUS_TIMEOUT_MS); 10 s when not given. */
  timeoutMs?: number;
  /** Payloads larger than this go by claim check; default: the server's max_payload minus 64 KiB. */
  claimCheckThreshold?: number;
  /**
   * Whose claim store a large body goes to (each request subject's server, the services with a
   * store); default: the system's topology (SystemClaimRouting). A registry of its own (the bus
   * lib's tests) brings its own.
   */
  claimRouting?: ClaimRouting<RequestSubject<R>, string>;
  /** JOB_MAX_FAILURES, STREAM_MAX_BYTES and STREAM_REPLICAS (a service passes its config as it is); unset: the library's defaults. */
  streamSettings?: StreamSettings;
  /**
   * Whether a job handler's error is an outage of a dependency (e.g. libs/db's isDatabaseUnavailable),
   * not a failure of the job: such a message is retried after a backoff without counting towards
   * JOB_MAX_FAILURES, so a long Postgres outage does not dead-letter the work it held up.
   */
  isOutage?: (err: unknown) => boolean;
  /** Request handlers run at once (BUS_SERVE_CONCURRENCY); 64 when not given. */
  serveConcurrency?: number;
}

/**
 * The bus of one deployment. Its subjects and their types come from a registry (default: the system's,
 * BusRegistry in libs/contracts), so the payload and reply types follow from the subject:
 * `bus.request(Subjects.clients.lookup, { ... })` needs no type arguments.
 */
export interface Bus<R extends BusRegistryShape = BusRegistry> {
  readonly connection: NatsConnection;
  readonly prefix: string;
  subject(relative: string): string;
  /** JetStream: durable work queues and events. */
  readonly streams: DurableStreams<R['streams']>;
  /** Sends a request and returns the reply's data; a failure reply is thrown as a ServiceError. */
  request<S extends RequestSubject<R>>(
    subject: S,
    payload: RequestOf<S, R>,
    opts?: RequestOptions,
  ): Promise<ReplyOf<S, R>>;
  /** Answers requests on a subject; a thrown ServiceError travels back with its code. */
  serve<S extends RequestSubject<R>>(
    subject: S,
    handler: RequestHandler<RequestOf<S, R>, ReplyOf<S, R>>,
    opts: ServeOptions,
  ): Subscription;
  /** Stops taking requests, waits for the ones in flight to answer, then closes the connection. */
  close(): Promise<void>;
}

/**
 * The one shape of a service's request-reply side: `registerHandlers(bus, deps)` in the service's
 * src/transport/ serves each subject the service answers (with its queue group, QueueGroups) and
 * returns the subscriptions; `deps` is one object holding what the handlers need. bus.close()
 * drains the subscriptions, so a service need not keep them.
 */
export type RegisterHandlers<Deps> = (bus: Bus, deps: Deps) => Subscription[];

/**
 * The one shape of a service's JetStream side, beside RegisterHandlers: `startWorkers(bus, deps)` in
 * the service's src/transport/ starts a consumer on each stream the service works off (the streams
 * exist: the service ensured them at start) and resolves to the consumptions; `deps` is one object
 * holding what the workers need (its `WorkerDeps`), their settings included. The service stops each
 * consumption (Consumption.stop: the batch in hand is acked first) before bus.close().
 */
export type StartWorkers<Deps> = (bus: Bus, deps: Deps) => Promise<Consumption[]>;

/**
 * Connects to NATS (JetStream required) and returns the bus of this deployment's prefix: request-reply
 * with error mapping and claim checks for large bodies, and the durable streams.
 */
export async function connectBus<R extends BusRegistryShape = BusRegistry>(opts: BusOptions<R>): Promise<Bus<R>> {
  const connection = await openConnection(opts);
  const log = opts.logger.child({ component: 'bus' });
  const subject = (relative: string) => `${opts.prefix}.${relative}`;
  const settings = { prefix: opts.prefix, self: opts.name, threshold: opts.claimCheckThreshold, log };
  const payloads = opts.claimRouting
    ? payloadCodec(connection, { ...settings, routing: opts.claimRouting })
    : payloadCodec(connection, { ...settings, routing: SystemClaimRouting });
  const request = requester({ connection, payloads, subject, timeoutMs: opts.timeoutMs ?? 10_000 });
  const served = responder({ connection, payloads, subject, log, concurrency: opts.serveConcurrency ?? 64 });

  async function close(): Promise<void> {
    await served.drain();
    if (!connection.isClosed()) await connection.drain().catch(() => undefined);
  }

  const streams = new DurableStreams<R['streams']>(connection, opts.prefix, log, {
    ...opts.streamSettings,
    isOutage: opts.isOutage,
  });
  return { connection, prefix: opts.prefix, subject, streams, request, serve: served.serve, close };
}

/** What every service's configuration holds for its bus: the NATS_*, BUS_* and stream variables. */
export interface ServiceBusSettings extends NatsCredentials, StreamSettings {
  natsUrl: string;
  busPrefix: string;
  busTimeoutMs: number;
  busServeConcurrency: number;
}

/**
 * A service's bus options from its configuration, the same for every service: its own NATS user and
 * reply inboxes (`_INBOX_<name>`, see deploy/nats), the reply wait, the serving concurrency and the
 * least its streams and claim stores must have (STREAM_MAX_BYTES, STREAM_REPLICAS, JOB_MAX_FAILURES).
 */
export function serviceBusOptions(config: ServiceBusSettings, name: string, logger: Logger): BusOptions {
  return {
    url: config.natsUrl,
    prefix: config.busPrefix,
    name,
    credentials: config,
    streamSettings: config,
    logger,
    timeoutMs: config.busTimeoutMs,
    serveConcurrency: config.busServeConcurrency,
  };
}
