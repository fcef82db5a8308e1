import type { ConsumerInfo, JetStreamManager, NatsConnection, StreamConfig, StreamInfo } from 'nats';
import { claimStoreRecipients, JobStreams, type StreamSpec } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { retryTransient } from './jetstream-retry';
import { untilStreamLed } from './stream-setup';
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
 * Provisioning (`npm run admin -- bus provision`, with the admin NATS user): creates every job
 * stream, the dead-letter stream, every durable consumer and every claim store of a bus prefix, or
 * brings an existing one to its configuration (topology-config.ts). It raises replicas and max_bytes
 * and never lowers them: an existing larger value is kept, and the report says so. Services only
 * check at start what it made (topology-check.ts); they may not create or change any of it.
 */

export type ProvisionKind = 'stream' | 'consumer' | 'claim store';

/** created: it was missing; raised: replicas or max_bytes went up; updated: another setting was set back; unchanged. */
export type ProvisionAction = 'created' | 'raised' | 'updated' | 'unchanged';

export interface ProvisionEntry {
  kind: ProvisionKind;
  /** The stream's name (a claim store's: its object store's stream, `OBJ_<prefix>_claims_<service>`), or `<stream>/<consumer>`. */
  name: string;
  action: ProvisionAction;
  /** What changed or was kept, in words (`max_bytes 1048576 -> 2097152`, `kept num_replicas 3, above the 1 asked`). */
  notes: string[];
}

export interface ProvisionReport {
  prefix: string;
  entries: ProvisionEntry[];
}

export interface ProvisionOptions extends BusLimits {
  prefix: string;
  /** Where retries while the cluster is not ready are logged. */
  logger?: Logger;
}

/** A setting JetStream cannot change on an existing stream or consumer: an operator removes it first. */
export class BusProvisionError extends Error {
  override readonly name = 'BusProvisionError';

  constructor(
    readonly what: string,
    readonly setting: string,
    readonly have: string,
    readonly want: string,
  ) {
    super(
      `${what} has ${setting} ${have}, not ${want}; JetStream cannot change it in place: ` +
        'remove it (after draining it) and run `npm run admin -- bus provision` again',
    );
  }
}

/** Everything of `prefix`: the registry's job streams and their consumers, the dead letters, every claim store. */
export async function provisionBus(nc: NatsConnection, opts: ProvisionOptions): Promise<ProvisionReport> {
  const entries = await provisionJobStreams(
    nc,
    JobStreams.map((p) => p.stream),
    opts,
  );
  for (const recipient of claimStoreRecipients()) {
    const wanted = claimStoreConfig(opts.prefix, recipient, opts);
    entries.push(await provisionStream(nc, wanted, 'claim store', opts.logger));
  }
  return { prefix: opts.prefix, entries };
}

/**
 * `specs`' streams and durable consumers, and the dead-letter stream (where their consumers put what
 * fails): what a test provisions on its own prefix before it consumes. `ackWaitMs` is the consumers'
 * (default DEFAULT_ACK_WAIT_MS).
 */
export async function provisionJobStreams(
  nc: NatsConnection,
  specs: readonly StreamSpec[],
  opts: ProvisionOptions & { ackWaitMs?: number },
): Promise<ProvisionEntry[]> {
  const entries: ProvisionEntry[] = [];
  for (const spec of specs) {
    const stream = jobStreamConfig(opts.prefix, spec, opts);
    entries.push(await provisionStream(nc, stream, 'stream', opts.logger));
    entries.push(await provisionConsumer(nc, stream.name, durableConsumerConfig(spec, opts.ackWaitMs), opts.logger));
  }
  entries.push(await provisionStream(nc, deadLetterStreamConfig(opts.prefix, opts), 'stream', opts.logger));
  return entries;
}

const isNotFound = (err: unknown) => /not found/i.test((err as Error)?.message ?? '');
const isTaken = (err: unknown) => /already in use|exists/i.test((err as Error)?.message ?? '');

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  return jsm.streams.info(name).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
}

/**
 * Creates the stream, or brings an existing one to `wanted` without lowering it. Tried again while
 * the cluster is not ready (retryTransient); safe to run from two places at once.
 */
export function provisionStream(
  nc: NatsConnection,
  wanted: WantedStream,
  kind: ProvisionKind = 'stream',
  logger?: Logger,
): Promise<ProvisionEntry> {
  return retryTransient(
    `${kind} ${wanted.name}`,
    async () => {
      const jsm = await nc.jetstreamManager();
      const before = await streamInfo(jsm, wanted.name);
      if (!before) {
        const created = await jsm.streams.add(wanted).then(
          () => true,
          (err: unknown) => {
            // Another provisioner created it in the meantime: brought to `wanted` below, as any existing one.
            if (!isTaken(err)) throw err;
            return false;
          },
        );
        if (created) return { kind, name: wanted.name, action: 'created' as const, notes: [] };
      }
      return raiseStream(jsm, (before ?? (await jsm.streams.info(wanted.name))).config, wanted, kind);
    },
    { logger },
  );
}

/** A limit that is only ever raised: -1 (no limit) and any value above `want` are kept. */
function raised(setting: string, have: number, want: number, notes: string[]): number | undefined {
  if (have === want) return undefined;
  if (have === -1 || have > want) {
    notes.push(`kept ${setting} ${have === -1 ? 'unlimited' : have}, above the ${want} asked`);
    return undefined;
  }
  notes.push(`${setting} ${have} -> ${want}`);
  return want;
}

const sameList = (a: readonly string[] | undefined, b: readonly string[]) =>
  JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...b].sort());

async function raiseStream(
  jsm: JetStreamManager,
  have: StreamConfig,
  wanted: WantedStream,
  kind: ProvisionKind,
): Promise<ProvisionEntry> {
  if (have.retention !== wanted.retention)
    throw new BusProvisionError(`${kind} ${wanted.name}`, 'retention', have.retention, wanted.retention);
  const notes: string[] = [];
  const update: Partial<StreamConfig> = {};
  const maxBytes = raised('max_bytes', have.max_bytes, wanted.max_bytes, notes);
  if (maxBytes !== undefined) update.max_bytes = maxBytes;
  const replicas = raised('num_replicas', have.num_replicas, wanted.num_replicas, notes);
  if (replicas !== undefined) update.num_replicas = replicas;
  const limitsRaised = Object.keys(update).length > 0;
  // Subjects someone added are taken away again: a stream stores whatever is published on its subjects.
  if (!sameList(have.subjects, wanted.subjects)) {
    notes.push(`subjects ${have.subjects.join(',')} -> ${wanted.subjects.join(',')}`);
    update.subjects = wanted.subjects;
  }
  for (const key of ['duplicate_window', 'discard', 'max_age', 'allow_direct', 'allow_rollup_hdrs'] as const) {
    const want = wanted[key];
    if (want !== undefined && have[key] !== want) {
      notes.push(`${key} ${String(have[key])} -> ${String(want)}`);
      Object.assign(update, { [key]: want });
    }
  }
  const changed = Object.keys(update).length > 0;
  if (changed) {
    await jsm.streams.update(wanted.name, update);
    if (update.num_replicas !== undefined) await untilStreamLed(jsm, wanted.name);
  }
  const action = limitsRaised ? 'raised' : changed ? 'updated' : 'unchanged';
  return { kind, name: wanted.name, action, notes };
}

/** Creates the durable consumer on `stream`, or sets its ack wait and max_ack_pending back to `wanted`. */
export function provisionConsumer(
  nc: NatsConnection,
  stream: string,
  wanted: WantedConsumer,
  logger?: Logger,
): Promise<ProvisionEntry> {
  const name = `${stream}/${wanted.durable_name}`;
  return retryTransient(
    `consumer ${name}`,
    async () => {
      const jsm = await nc.jetstreamManager();
      const before = await jsm.consumers.info(stream, wanted.durable_name).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (!before) {
        // Adding a durable that exists with the same config is no error: two provisioners at once are fine.
        await jsm.consumers.add(stream, wanted);
        return { kind: 'consumer' as const, name, action: 'created' as const, notes: [] };
      }
      return updateConsumer(jsm, stream, before, wanted);
    },
    { logger },
  );
}

async function updateConsumer(
  jsm: JetStreamManager,
  stream: string,
  before: ConsumerInfo,
  wanted: WantedConsumer,
): Promise<ProvisionEntry> {
  const name = `${stream}/${wanted.durable_name}`;
  const have = before.config;
  for (const key of ['ack_policy', 'deliver_policy'] as const) {
    const want = wanted[key];
    if (want !== undefined && have[key] !== want)
      throw new BusProvisionError(`consumer ${name}`, key, String(have[key]), String(want));
  }
  const notes: string[] = [];
  const update: Partial<WantedConsumer> = {};
  for (const key of ['ack_wait', 'max_ack_pending'] as const) {
    const want = wanted[key];
    if (want !== undefined && have[key] !== want) {
      notes.push(`${key} ${String(have[key])} -> ${String(want)}`);
      update[key] = want;
    }
  }
  if (notes.length > 0) await jsm.consumers.update(stream, wanted.durable_name, update);
  return { kind: 'consumer', name, action: notes.length > 0 ? 'updated' : 'unchanged', notes };
}

/** The report as lines for a terminal: one per stream, consumer and claim store, then a count. */
export function formatProvisionReport(report: ProvisionReport): string {
  const lines = report.entries.map((e) => {
    const notes = e.notes.length > 0 ? ` (${e.notes.join('; ')})` : '';
    return `${e.action.padEnd(9)} ${e.kind.padEnd(11)} ${e.name}${notes}`;
  });
  const count = (action: ProvisionAction) => report.entries.filter((e) => e.action === action).length;
  lines.push(
    `bus ${report.prefix}: ${count('created')} created, ${count('raised')} raised, ` +
      `${count('updated')} updated, ${count('unchanged')} unchanged`,
  );
  return lines.join('\n');
}
