import { randomBytes } from 'node:crypto';
import { nanos, RetentionPolicy, StorageType, type NatsConnection } from 'nats';
import {
  type BusService,
  BusServices,
  claimStoreName,
  claimStoreRecipients,
  JobStreams,
  QueueGroups,
  Streams,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { removeBus } from '@payments/test-support/bus-provision';
import {
  BusTopologyError,
  checkTopology,
  connectBus,
  DEAD_LETTER_MAX_AGE_MS,
  provisionBus,
  type Bus,
  type ProvisionReport,
  type TopologyDifference,
} from '../src';

/**
 * Provisioning (`npm run admin -- bus provision`) and the services' start-up check, on the machine's
 * NATS: the provisioner creates every stream, consumer and claim store, again changes nothing, raises
 * max_bytes and never lowers it; a service refuses to start on a bus missing something it uses, or
 * weaker than its settings, naming each difference; a consumer is only opened, never added.
 */

const logger = createLogger('provision-test', 'silent');
const MiB = 1024 * 1024;
const prefixes: string[] = [];
let bus: Bus;
let nc: NatsConnection;

const newPrefix = () => {
  const prefix = `p${randomBytes(4).toString('hex')}`;
  prefixes.push(prefix);
  return prefix;
};
const provision = (prefix: string, maxBytes = MiB) => provisionBus(nc, { prefix, maxBytes, replicas: 1, logger });
const differences = (prefix: string, service: BusService, maxBytes = MiB): Promise<TopologyDifference[]> =>
  checkTopology(nc, { prefix, service, maxBytes, replicas: 1 }).then(
    () => [],
    (err: unknown) => {
      if (!(err instanceof BusTopologyError)) throw err;
      return [...err.differences];
    },
  );
const actions = (report: ProvisionReport) => report.entries.map((e) => `${e.action} ${e.kind} ${e.name}`);

beforeAll(async () => {
  bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix: 'provision-test', name: 'provision-test', logger });
  nc = bus.connection;
});
afterAll(async () => {
  for (const prefix of prefixes) await removeBus(prefix);
  await bus.close();
});

it('creates every job stream, consumer, the dead letters and every claim store; a second run changes nothing', async () => {
  const prefix = newPrefix();
  const first = await provision(prefix);
  const jobs = JobStreams.map((p) => p.stream);
  expect(actions(first)).toEqual([
    ...jobs.flatMap((s) => [
      `created stream ${prefix}_${s.name}`,
      `created consumer ${prefix}_${s.name}/${s.consumer}`,
    ]),
    `created stream ${prefix}_dead_letters`,
    ...claimStoreRecipients().map((r) => `created claim store OBJ_${claimStoreName(prefix, r)}`),
  ]);
  const jsm = await nc.jetstreamManager();
  const registrations = await jsm.streams.info(`${prefix}_${Streams.receivableRegistrations.name}`);
  expect(registrations.config).toMatchObject({
    subjects: [`${prefix}.${Streams.receivableRegistrations.subject}`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_bytes: MiB,
    num_replicas: 1,
  });
  // A claim store is an object store nats.js opens as its own.
  const store = await nc.jetstream().views.os(claimStoreName(prefix, QueueGroups.gateway));
  expect((await store.status()).ttl).toBe(10 * 60_000 * 1e6);

  const second = await provision(prefix);
  expect(second.entries.map((e) => e.action)).toEqual(first.entries.map(() => 'unchanged'));
  // Every service finds what it uses.
  for (const service of BusServices) expect(await differences(prefix, service)).toEqual([]);
});

it('raises max_bytes, and never lowers it: a larger value is kept and reported', async () => {
  const prefix = newPrefix();
  await provision(prefix, MiB);
  const raised = await provision(prefix, 2 * MiB);
  const callbacks = raised.entries.find((e) => e.name === `${prefix}_callbacks`);
  expect(callbacks).toMatchObject({ action: 'raised', notes: [`max_bytes ${MiB} -> ${2 * MiB}`] });
  expect(raised.entries.filter((e) => e.kind !== 'consumer').every((e) => e.action === 'raised')).toBe(true);

  const lower = await provision(prefix, MiB);
  expect(lower.entries.find((e) => e.name === `${prefix}_callbacks`)).toMatchObject({
    action: 'unchanged',
    notes: [`kept max_bytes ${2 * MiB}, above the ${MiB} asked`],
  });
  const jsm = await nc.jetstreamManager();
  expect((await jsm.streams.info(`${prefix}_callbacks`)).config.max_bytes).toBe(2 * MiB);
  expect((await jsm.streams.info(`OBJ_${claimStoreName(prefix, QueueGroups.callbacks)}`)).config.max_bytes).toBe(
    2 * MiB,
  );
});

it('takes away a subject someone added to a stream', async () => {
  const prefix = newPrefix();
  await provision(prefix);
  const jsm = await nc.jetstreamManager();
  const name = `OBJ_${claimStoreName(prefix, QueueGroups.clients)}`;
  const { config } = await jsm.streams.info(name);
  await jsm.streams.update(name, { subjects: [...config.subjects, `_INBOX_${QueueGroups.callbacks}.>`] });
  expect(await differences(prefix, QueueGroups.clients)).toEqual([
    expect.objectContaining({ kind: 'claim store', name, problem: 'other subjects' }),
  ]);
  const report = await provision(prefix);
  expect(report.entries.find((e) => e.name === name)).toMatchObject({ action: 'updated' });
  expect((await jsm.streams.info(name)).config.subjects).toEqual(config.subjects);
});

it('refuses rollups on a claim store, and takes them away where someone allowed them', async () => {
  const prefix = newPrefix();
  await provision(prefix);
  const jsm = await nc.jetstreamManager();
  const name = `OBJ_${claimStoreName(prefix, QueueGroups.clients)}`;
  expect((await jsm.streams.info(name)).config.allow_rollup_hdrs).toBe(false);
  await jsm.streams.update(name, { allow_rollup_hdrs: true });
  expect(await differences(prefix, QueueGroups.clients)).toEqual([
    expect.objectContaining({ kind: 'claim store', name, problem: 'rollups allowed' }),
  ]);
  const report = await provision(prefix);
  expect(report.entries.find((e) => e.name === name)).toMatchObject({ action: 'updated' });
  expect((await jsm.streams.info(name)).config.allow_rollup_hdrs).toBe(false);
});

it('gives the dead letters an age limit, set on an older stream, and refuses a shorter one', async () => {
  const prefix = newPrefix();
  await provision(prefix);
  const jsm = await nc.jetstreamManager();
  const name = `${prefix}_dead_letters`;
  const maxAge = nanos(DEAD_LETTER_MAX_AGE_MS);
  expect((await jsm.streams.info(name)).config.max_age).toBe(maxAge);

  // As a release before the limit provisioned it: kept for ever, which a service accepts.
  await jsm.streams.update(name, { max_age: 0 });
  expect(await differences(prefix, QueueGroups.callbacks)).toEqual([]);
  const limited = await provision(prefix);
  expect(limited.entries.find((e) => e.name === name)).toMatchObject({
    action: 'updated',
    notes: [`max_age 0 -> ${maxAge}`],
  });
  expect((await jsm.streams.info(name)).config.max_age).toBe(maxAge);

  // Shorter: dead letters would go before an operator re-drives them.
  const hour = nanos(60 * 60_000);
  await jsm.streams.update(name, { max_age: hour });
  expect(await differences(prefix, QueueGroups.callbacks)).toEqual([
    { kind: 'stream', name, problem: 'shorter max_age', have: '3600000 ms', want: `${DEAD_LETTER_MAX_AGE_MS} ms` },
  ]);
  await provision(prefix);
  expect((await jsm.streams.info(name)).config.max_age).toBe(maxAge);
});

describe('the start-up check', () => {
  it('refuses a bus never provisioned, naming every stream, consumer and claim store missing', async () => {
    const prefix = newPrefix();
    const found = await differences(prefix, QueueGroups.callbacks);
    expect(found).toEqual(
      expect.arrayContaining<TopologyDifference>([
        { kind: 'stream', name: `${prefix}_callbacks`, problem: 'missing' },
        { kind: 'consumer', name: `${prefix}_callbacks/callback-svc`, problem: 'missing' },
        { kind: 'stream', name: `${prefix}_dead_letters`, problem: 'missing' },
        { kind: 'claim store', name: `OBJ_${prefix}_claims_callback-svc`, problem: 'missing' },
      ]),
    );
    const refused = await checkTopology(nc, {
      prefix,
      service: QueueGroups.callbacks,
      maxBytes: MiB,
      replicas: 1,
    }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BusTopologyError);
    expect((refused as Error).message).toContain(`stream ${prefix}_callbacks: missing`);
    expect((refused as Error).message).toContain('npm run admin -- bus provision');
  });

  it('refuses a weaker stream: smaller max_bytes, fewer replicas than it asks, other subjects, wrong retention', async () => {
    const prefix = newPrefix();
    await provision(prefix, MiB);
    // receivables-svc started with STREAM_MAX_BYTES of 2 MiB: every stream it uses is too small.
    const smaller = await differences(prefix, QueueGroups.receivables, 2 * MiB);
    expect(smaller).toContainEqual({
      kind: 'stream',
      name: `${prefix}_registrations`,
      problem: 'smaller max_bytes',
      have: String(MiB),
      want: String(2 * MiB),
    });
    const fewer = await checkTopology(nc, {
      prefix,
      service: QueueGroups.receivables,
      maxBytes: MiB,
      replicas: 3,
    }).catch((err: BusTopologyError) => err.differences);
    expect(fewer).toContainEqual({
      kind: 'stream',
      name: `${prefix}_cancellations`,
      problem: 'fewer replicas',
      have: '1',
      want: '3',
    });

    const jsm = await nc.jetstreamManager();
    await jsm.streams.update(`${prefix}_callbacks`, { subjects: [`${prefix}.callbacks.>`] });
    await jsm.streams.delete(`${prefix}_dead_letters`);
    await jsm.streams.add({
      name: `${prefix}_dead_letters`,
      subjects: [`${prefix}.dead_letters`],
      max_bytes: MiB,
      retention: RetentionPolicy.Interest,
    });
    expect(await differences(prefix, QueueGroups.callbacks)).toEqual([
      {
        kind: 'stream',
        name: `${prefix}_callbacks`,
        problem: 'other subjects',
        have: `${prefix}.callbacks.>`,
        want: `${prefix}.callbacks.requested`,
      },
      { kind: 'stream', name: `${prefix}_dead_letters`, problem: 'wrong retention', have: 'interest', want: 'limits' },
    ]);
  });

  it('refuses a consumer whose ack wait is shorter than the one it sends heartbeats for', async () => {
    const prefix = newPrefix();
    const service = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'provision-test-ack', logger });
    try {
      await service.streams.provisionWith({ ackWaitMs: 1_000 }, Streams.bookletBuilds);
      const refused = await service.streams
        .consumeEach(Streams.bookletBuilds, async () => 'done', { ackWaitMs: 5_000 })
        .catch((err: unknown) => err);
      expect((refused as BusTopologyError).differences).toEqual([
        {
          kind: 'consumer',
          name: `${prefix}_booklets/${Streams.bookletBuilds.consumer}`,
          problem: 'shorter ack wait',
          have: '1000 ms',
          want: '5000 ms',
        },
      ]);
      // As long as or longer: taken.
      const consumption = await service.streams.consumeEach(Streams.bookletBuilds, async () => 'done', {
        ackWaitMs: 1_000,
      });
      await consumption.stop();
    } finally {
      await service.close();
    }
  });

  it('never creates the dead-letter stream: with it gone, poison stays in its stream, retried', async () => {
    const prefix = newPrefix();
    const service = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'provision-test-dl', logger });
    try {
      await service.streams.provision(Streams.bookletBuilds);
      const jsm = await nc.jetstreamManager();
      await jsm.streams.delete(`${prefix}_dead_letters`);
      const consumption = await service.streams.consumeEach(Streams.bookletBuilds, async () => 'done');
      try {
        await service.streams.publishJson(Streams.bookletBuilds, 'not json', 'poison-1');
        await new Promise((r) => setTimeout(r, 1_000));
      } finally {
        await consumption.stop();
      }
      await expect(jsm.streams.info(`${prefix}_dead_letters`)).rejects.toThrow(/not found/);
      expect((await jsm.streams.info(`${prefix}_booklets`)).state.messages).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('opens a consumer only: a missing one is refused, named, and not added', async () => {
    const prefix = newPrefix();
    const service = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'provision-test-svc', logger });
    try {
      await service.streams.provision(Streams.bookletBuilds);
      const jsm = await nc.jetstreamManager();
      const stream = `${prefix}_${Streams.bookletBuilds.name}`;
      await jsm.consumers.delete(stream, Streams.bookletBuilds.consumer);
      const refused = await service.streams
        .consumeEach(Streams.bookletBuilds, async () => 'done')
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(BusTopologyError);
      expect((refused as BusTopologyError).differences).toEqual([
        { kind: 'consumer', name: `${stream}/${Streams.bookletBuilds.consumer}`, problem: 'missing' },
      ]);
      await expect(jsm.consumers.info(stream, Streams.bookletBuilds.consumer)).rejects.toThrow(/not found/);
    } finally {
      await service.close();
    }
  });
});
