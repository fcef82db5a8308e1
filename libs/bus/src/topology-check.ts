import { nanos, type JetStreamManager, type NatsConnection, type StreamConfig } from 'nats';
import {
  claimStoreRecipients,
  claimStoreWriters,
  DeadLetterProducers,
  DeadLetterReaders,
  JobStreams,
  type BusService,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { retryTransient } from './jetstream-retry';
import {
  claimStoreConfig,
  deadLetterStreamConfig,
  durableConsumerConfig,
  jobStreamConfig,
  type BusLimits,
  type WantedConsumer,
  type WantedStream,
} from './topology-config';

/**
 * A service's start-up check: the streams it publishes to or consumes, its durable consumers, the
 * dead-letter stream and the claim stores it reads and writes, found with info calls only
 * (STREAM.INFO, CONSUMER.INFO). A service may not create or change any of it (its NATS user is not
 * allowed to): `npm run admin -- bus provision` does. Anything missing or weaker than the service's
 * own STREAM_REPLICAS and STREAM_MAX_BYTES stops the start, each difference named.
 */

export type TopologyProblem =
  | 'missing'
  | 'fewer replicas'
  | 'smaller max_bytes'
  | 'other subjects'
  | 'wrong retention'
  | 'shorter max_age'
  | 'rollups allowed'
  | 'other ack policy'
  | 'shorter ack wait';

export interface TopologyDifference {
  kind: 'stream' | 'consumer' | 'claim store';
  /** The stream (a claim store's: `OBJ_<store>`), or `<stream>/<consumer>`. */
  name: string;
  problem: TopologyProblem;
  /** What the server has, and what the service needs (absent for `missing`). */
  have?: string;
  want?: string;
}

/** The bus is not provisioned for this service: every difference found, named. */
export class BusTopologyError extends Error {
  override readonly name = 'BusTopologyError';
  /** Logged as a one-line start-up problem (libs/lifecycle), without a stack. */
  readonly startupProblem = true;
  readonly problem = 'bus_not_provisioned';

  constructor(
    readonly service: string,
    readonly prefix: string,
    readonly differences: readonly TopologyDifference[],
  ) {
    super(
      `bus ${prefix} is not provisioned for ${service}: ${differences.map(describe).join('; ')} ` +
        '(run `npm run admin -- bus provision` with the admin NATS user)',
    );
  }
}

function describe(d: TopologyDifference): string {
  const detail = d.have === undefined ? '' : ` (has ${d.have}, needs ${d.want})`;
  return `${d.kind} ${d.name}: ${d.problem}${detail}`;
}

/** What `service` uses on the bus of `prefix`, as the registry (libs/contracts' bus topology) says. */
export interface ServiceTopology {
  streams: WantedStream[];
  consumers: Array<{ stream: string; consumer: WantedConsumer }>;
  claimStores: WantedStream[];
}

export function topologyOf(service: BusService, prefix: string, limits: BusLimits): ServiceTopology {
  const used = JobStreams.filter((p) => p.consumer === service || p.producers.includes(service));
  const streams = used.map((p) => jobStreamConfig(prefix, p.stream, limits));
  const deadLetters =
    DeadLetterProducers.includes(service) || (DeadLetterReaders as readonly string[]).includes(service);
  if (deadLetters) streams.push(deadLetterStreamConfig(prefix, limits));
  const consumers = JobStreams.filter((p) => p.consumer === service).map((p) => ({
    stream: jobStreamConfig(prefix, p.stream, limits).name,
    consumer: durableConsumerConfig(p.stream),
  }));
  // Its own store (it reads it) and those of the services it sends bodies to (it writes them).
  const claimStores = claimStoreRecipients()
    .filter((recipient) => recipient === service || claimStoreWriters(recipient).includes(service))
    .map((recipient) => claimStoreConfig(prefix, recipient, limits));
  return { streams, consumers, claimStores };
}

export interface CheckTopologyOptions extends BusLimits {
  service: BusService;
  prefix: string;
  /** Where retries while the cluster is not ready are logged. */
  logger?: Logger;
}

/** Resolves when everything `service` uses is there and strong enough; else BusTopologyError. */
export async function checkTopology(nc: NatsConnection, opts: CheckTopologyOptions): Promise<void> {
  const differences = await topologyDifferences(nc, opts);
  if (differences.length > 0) throw new BusTopologyError(opts.service, opts.prefix, differences);
}

/** What checkTopology would refuse, without refusing. */
export async function topologyDifferences(
  nc: NatsConnection,
  opts: CheckTopologyOptions,
): Promise<TopologyDifference[]> {
  const wanted = topologyOf(opts.service, opts.prefix, opts);
  return retryTransient(
    `bus check of ${opts.service}`,
    async () => {
      const jsm = await nc.jetstreamManager();
      const differences: TopologyDifference[] = [];
      for (const stream of wanted.streams) differences.push(...(await streamDifferences(jsm, stream, 'stream')));
      for (const { stream, consumer } of wanted.consumers)
        differences.push(...(await consumerDifferences(jsm, stream, consumer)));
      for (const store of wanted.claimStores) differences.push(...(await streamDifferences(jsm, store, 'claim store')));
      return differences;
    },
    { logger: opts.logger },
  );
}

const isNotFound = (err: unknown) => /not found/i.test((err as Error)?.message ?? '');

/** -1 is JetStream's "no limit": more than any number. */
const atLeast = (have: number, want: number) => have === -1 || have >= want;

async function streamDifferences(
  jsm: JetStreamManager,
  wanted: WantedStream,
  kind: 'stream' | 'claim store',
): Promise<TopologyDifference[]> {
  const info = await jsm.streams.info(wanted.name).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!info) return [{ kind, name: wanted.name, problem: 'missing' }];
  const have: StreamConfig = info.config;
  const found: TopologyDifference[] = [];
  const differ = (problem: TopologyProblem, h: unknown, w: unknown) =>
    found.push({ kind, name: wanted.name, problem, have: String(h), want: String(w) });
  if (have.num_replicas < wanted.num_replicas) differ('fewer replicas', have.num_replicas, wanted.num_replicas);
  if (!atLeast(have.max_bytes, wanted.max_bytes)) differ('smaller max_bytes', have.max_bytes, wanted.max_bytes);
  const subjects = [...(have.subjects ?? [])].sort().join(',');
  if (subjects !== [...wanted.subjects].sort().join(',')) differ('other subjects', subjects, wanted.subjects.join(','));
  if (have.retention !== wanted.retention) differ('wrong retention', have.retention, wanted.retention);
  // A claim store keeps a body CLAIM_STORE_TTL_MS for a recipient that is slow to come, the dead letters
  // theirs for an operator to re-drive (DEAD_LETTER_MAX_AGE_MS): shorter loses them. 0 is "forever".
  if (wanted.max_age !== undefined && have.max_age !== 0 && have.max_age < wanted.max_age)
    differ('shorter max_age', `${have.max_age / nanos(1)} ms`, `${wanted.max_age / nanos(1)} ms`);
  // A rollup purges a subject or the whole stream: whoever may publish to it could empty it.
  if (have.allow_rollup_hdrs && wanted.allow_rollup_hdrs === false) differ('rollups allowed', true, false);
  return found;
}

async function consumerDifferences(
  jsm: JetStreamManager,
  stream: string,
  wanted: WantedConsumer,
): Promise<TopologyDifference[]> {
  const name = `${stream}/${wanted.durable_name}`;
  const info = await jsm.consumers.info(stream, wanted.durable_name).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!info) return [{ kind: 'consumer', name, problem: 'missing' }];
  if (info.config.ack_policy !== wanted.ack_policy)
    return [
      { kind: 'consumer', name, problem: 'other ack policy', have: info.config.ack_policy, want: wanted.ack_policy },
    ];
  return [];
}
