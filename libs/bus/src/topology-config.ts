import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type StreamConfig,
} from 'nats';
import { claimStoreName, DeadLetterStream, type BusService, type StreamSpec } from '@payments/contracts';
import { CLAIM_STORE_TTL_MS } from './claim-check';

/**
 * What every stream, durable consumer and claim store of a bus prefix looks like: the one place the
 * provisioner (provision.ts) builds them from and the services' start-up check (topology-check.ts)
 * compares them with. Who owns which is libs/contracts' bus topology.
 */

/**
 * How long a consumer's message may go without an ack or a heartbeat before JetStream gives it to
 * another instance. Short, so that the work a killed instance held is taken over within seconds
 * (Many instances: 15 s); a handler that runs longer sends heartbeats (whileBeating). At
 * 15 s, a killed worker's jobs came back 10-15 s after the kill (its last heartbeat up to 5 s before),
 * and bench/recovery's last callback 14.7-15.2 s after it; at 10 s they come back within 7-10 s.
 */
export const DEFAULT_ACK_WAIT_MS = 10_000;

/** Messages a durable consumer may have out unacked, over all its instances. */
export const MAX_ACK_PENDING = 20_000;

/** STREAM_MAX_BYTES and STREAM_REPLICAS: every stream's and claim store's, the least a service accepts. */
export interface BusLimits {
  maxBytes: number;
  replicas: number;
}

/** A stream as it should be: the fields the provisioner sets and the check compares. */
export type WantedStream = Partial<StreamConfig> & {
  name: string;
  subjects: string[];
  retention: RetentionPolicy;
  max_bytes: number;
  num_replicas: number;
};

/** A durable pull consumer as it should be. */
export type WantedConsumer = Partial<ConsumerConfig> & { durable_name: string; ack_policy: AckPolicy };

/** A job stream: a work queue (a message leaves once acked), `<prefix>_<name>` on `<prefix>.<subject>`. */
export function jobStreamConfig(prefix: string, spec: StreamSpec, limits: BusLimits): WantedStream {
  return {
    name: `${prefix}_${spec.name}`,
    subjects: [`${prefix}.${spec.subject}`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(spec.duplicateWindowMs),
    // A full stream refuses a publish (discard new): the outbox keeps the row and retries, nothing is lost.
    max_bytes: limits.maxBytes,
    discard: DiscardPolicy.New,
    num_replicas: limits.replicas,
  };
}

/**
 * How long a dead letter is kept before JetStream drops it (the stream's max_age). Long enough for an
 * operator to see one (jobs_dead_lettered_total, `npm run admin -- jobs dead`) and re-drive it after a
 * holiday or a fix that takes a release; bounded, so poison that nobody re-drives does not fill the
 * stream for ever (a full one refuses new dead letters, and their messages are then retried for ever).
 */
export const DEAD_LETTER_MAX_AGE_MS = 30 * 24 * 60 * 60_000;

/**
 * The dead-letter stream, `<prefix>_dead_letters`: limits retention (nothing consumes it; an operator
 * re-drives), discard new, so a full stream refuses a dead letter and its message stays where it was;
 * a dead letter older than DEAD_LETTER_MAX_AGE_MS is dropped.
 */
export function deadLetterStreamConfig(prefix: string, limits: BusLimits): WantedStream {
  return {
    name: `${prefix}_${DeadLetterStream.name}`,
    subjects: [`${prefix}.${DeadLetterStream.subject}`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_bytes: limits.maxBytes,
    num_replicas: limits.replicas,
    duplicate_window: nanos(DeadLetterStream.duplicateWindowMs),
    max_age: nanos(DEAD_LETTER_MAX_AGE_MS),
  };
}

/**
 * A claim store, `<prefix>_claims_<service>`, is a JetStream object store: the stream `OBJ_<store>`,
 * configured as nats.js's `views.os` creates it (so a client binding to it finds it as its own),
 * with CLAIM_STORE_TTL_MS as its max_age: a body whose recipient never comes expires.
 */
export function claimStoreConfig(prefix: string, recipient: BusService, limits: BusLimits): WantedStream {
  const store = claimStoreName(prefix, recipient);
  return {
    name: `OBJ_${store}`,
    subjects: [`$O.${store}.C.>`, `$O.${store}.M.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_age: nanos(CLAIM_STORE_TTL_MS),
    allow_direct: true,
    // No rollups: a writer may publish to the metadata subjects, and a rollup there purges the store.
    allow_rollup_hdrs: false,
    max_bytes: limits.maxBytes,
    num_replicas: limits.replicas,
    description: `large bus payloads for ${recipient} (claim check)`,
  };
}

/** A job stream's durable consumer (spec.consumer): explicit acks, from the first message. */
export function durableConsumerConfig(spec: StreamSpec, ackWaitMs = DEFAULT_ACK_WAIT_MS): WantedConsumer {
  return {
    durable_name: spec.consumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: MAX_ACK_PENDING,
  };
}
