import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { headers as natsHeaders } from 'nats';
import { DeadLetterHeaders, JobFailureHeaders, Streams, type StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, DeadLetterNotFoundError, DeadLetterRedriveRefusedError, publishErrorText, type Bus } from '../src';

/**
 * Dead letters on a real NATS: a handler that keeps throwing ends in `<prefix>_dead_letters` after
 * JOB_MAX_FAILURES (3 here) failures, however often it was retried for an outage before; poison is
 * dead-lettered at once; a dead letter is listed and re-driven; a full stream refuses publishes.
 */

const logger = createLogger('dead-letters-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
// A job stream of the registry (a re-drive publishes only to those), with a test's message schema.
const jobs = {
  ...Streams.bookletBuilds,
  consumer: 'job-worker',
  messageSchema: Type.Object({ id: Type.String({ minLength: 1 }) }),
} as const satisfies StreamSpec;
const batches = {
  name: 'batches',
  subject: 'batches.todo',
  consumer: 'batch-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
const tiny = { name: 'tiny', subject: 'tiny.todo', consumer: 'tiny-worker', duplicateWindowMs: 60_000 } as const;
type TestRegistry = {
  requests: Record<string, never>;
  streams: { 'booklets.build': { id: string }; 'batches.todo': { id: string }; 'tiny.todo': { pad: string } };
};
let bus: Bus<TestRegistry>;
let small: Bus<TestRegistry>;
const deadLettered: string[] = [];

beforeAll(async () => {
  bus = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'dead-letters-test',
    logger,
    streamSettings: { jobMaxFailures: 3, jobFailureBackoffMs: 50, streamMaxBytes: 8 * 1024 * 1024 },
  });
  bus.streams.onDeadLetter((stream) => deadLettered.push(stream));
  await bus.streams.provision(jobs, batches);
  // The same prefix with a 4 KiB limit per stream: for the full-stream case only.
  small = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'dead-letters-small',
    logger,
    streamSettings: { streamMaxBytes: 4 * 1024 },
  });
  await small.streams.provision(tiny);
});

afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [jobs.name, batches.name, tiny.name, 'dead_letters'])
    await jsm.streams.delete(`${prefix}_${name}`).catch(() => undefined);
  await small.close();
  await bus.close();
});

const until = async (check: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const messagesIn = async (name: string) =>
  (await (await bus.connection.jetstreamManager()).streams.info(`${prefix}_${name}`)).state.messages;

it('dead-letters a job after JOB_MAX_FAILURES throws, not counting outage retries, and re-drives it', async () => {
  const calls = new Map<string, number>();
  let healed = false;
  const consumption = await bus.streams.consumeEach(
    jobs,
    async ({ id }) => {
      const n = (calls.get(id) ?? 0) + 1;
      calls.set(id, n);
      // `outage`: the provider is down 5 times (more than the failure limit), then it works.
      if (id === 'outage') return n <= 5 ? { retryInMs: 20 } : 'done';
      // `broken` throws until the test heals it.
      if (id === 'broken' && !healed) {
        throw new Error(`row ${n} violates\na constraint`);
      }
      return 'done';
    },
    { concurrency: 4 },
  );
  try {
    await bus.streams.publish(jobs, { id: 'broken' }, 'msg-broken');
    await bus.streams.publish(jobs, { id: 'outage' }, 'msg-outage');
    await bus.streams.publish(jobs, { id: 'fine' }, 'msg-fine');
    await until(async () => (await bus.streams.deadLetters.list()).length === 1);
    await until(() => calls.get('outage') === 6);
    await sleep(300);

    // Thrown 3 times (then never again); the outage retried 6 times and was never dead-lettered.
    expect(calls.get('broken')).toBe(3);
    expect(calls.get('outage')).toBe(6);
    expect(calls.get('fine')).toBe(1);
    const [dead] = await bus.streams.deadLetters.list();
    expect(dead).toMatchObject({
      stream: `${prefix}_booklets`,
      subject: `${prefix}.booklets.build`,
      msg_id: 'msg-broken',
      error: 'row 3 violates a constraint',
      failures: 3,
    });
    expect(Date.parse(dead.dead_lettered_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(deadLettered).toEqual(['booklets']);
    expect(await messagesIn(jobs.name)).toBe(0);

    // Re-driven: published again under a derived id, handled (it works now), gone from the dead letters.
    healed = true;
    const redriven = await bus.streams.deadLetters.redrive(dead.id);
    expect(redriven).toEqual({
      id: dead.id,
      stream: `${prefix}_booklets`,
      msg_id: `msg-broken:redrive:${dead.id}`,
      duplicate: false,
    });
    await until(() => calls.get('broken') === 4);
    expect(await bus.streams.deadLetters.list()).toEqual([]);
    await expect(bus.streams.deadLetters.redrive(dead.id)).rejects.toBeInstanceOf(DeadLetterNotFoundError);
    await until(async () => (await messagesIn(jobs.name)) === 0);
  } finally {
    await consumption.stop();
  }
});

it('refuses to re-drive a forged dead letter: another subject, an unknown stream, another prefix', async () => {
  // Anyone who may publish to the dead-letter subject writes its headers: a forged dead letter names
  // a real job stream but another subject (another tenant's cancellations), or no job stream at all.
  const forged = [
    { stream: `${prefix}_booklets`, subject: `${prefix}.receivables.cancellation` },
    { stream: `${prefix}_tiny`, subject: `${prefix}.tiny.todo` },
    { stream: `other_booklets`, subject: `other.booklets.build` },
  ];
  const heard: string[] = [];
  const listeners = [...forged.map((f) => f.subject), `${prefix}.booklets.build`].map((subject) =>
    bus.connection.subscribe(subject, { callback: (_err, m) => heard.push(m.subject) }),
  );
  await bus.connection.flush();
  const ids: number[] = [];
  try {
    for (const [i, f] of forged.entries()) {
      const h = natsHeaders();
      h.set(DeadLetterHeaders.stream, f.stream);
      h.set(DeadLetterHeaders.subject, f.subject);
      h.set(DeadLetterHeaders.msgId, `forged-${i}`);
      const ack = await bus.connection
        .jetstream()
        .publish(`${prefix}.dead_letters`, Buffer.from('{"id":"forged"}'), { headers: h });
      ids.push(ack.seq);
    }
    for (const [i, f] of forged.entries()) {
      const refused = await bus.streams.deadLetters.redrive(ids[i]).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DeadLetterRedriveRefusedError);
      expect(refused).toMatchObject({ id: ids[i], stream: f.stream, subject: f.subject });
    }
    await bus.connection.flush();
    await sleep(200);
    // Nothing published, and the forged letters are still there for an operator to look at.
    expect(heard).toEqual([]);
    const listed = (await bus.streams.deadLetters.list()).map((d) => d.id);
    expect(listed).toEqual(expect.arrayContaining(ids));
  } finally {
    listeners.forEach((l) => l.unsubscribe());
    const jsm = await bus.connection.jetstreamManager();
    for (const id of ids) await jsm.streams.deleteMessage(`${prefix}_dead_letters`, id, false);
  }
});

it('retries a job held up by an outage (isOutage) without counting it, and still counts real failures', async () => {
  class OutageError extends Error {}
  const outageBus = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'dead-letters-outage',
    logger,
    streamSettings: { jobMaxFailures: 3, jobFailureBackoffMs: 20 },
    isOutage: (err) => err instanceof OutageError,
  });
  const calls = new Map<string, number>();
  const consumption = await outageBus.streams.consumeEach(jobs, async ({ id }) => {
    const n = (calls.get(id) ?? 0) + 1;
    calls.set(id, n);
    // Postgres away for 5 deliveries (more than the failure limit of 3), then back.
    if (id === 'db-down' && n <= 5) throw new OutageError('connect ECONNREFUSED 127.0.0.1:5432');
    if (id === 'bug') throw new Error('a real failure');
    return 'done';
  });
  try {
    await outageBus.streams.publish(jobs, { id: 'db-down' }, 'msg-db-down');
    await outageBus.streams.publish(jobs, { id: 'bug' }, 'msg-bug');
    await until(() => calls.get('db-down') === 6, 20_000);
    await until(async () => (await bus.streams.deadLetters.list()).some((d) => d.msg_id === 'msg-bug'));
    const dead = await bus.streams.deadLetters.list();
    expect(dead.map((d) => d.msg_id)).not.toContain('msg-db-down');
    expect(dead.find((d) => d.msg_id === 'msg-bug')).toMatchObject({ failures: 3 });
    expect(calls.get('bug')).toBe(3);
    await until(async () => (await messagesIn(jobs.name)) === 0);
  } finally {
    await consumption.stop();
    await outageBus.close();
  }
});

it('counts failures on the message, so another consumer (a restart, another instance) goes on counting', async () => {
  let calls = 0;
  const first = await bus.streams.consumeEach(jobs, async () => {
    calls += 1;
    throw new Error('first instance fails');
  });
  await bus.streams.publish(jobs, { id: 'moving' }, 'msg-moving');
  await until(() => calls === 1);
  await first.stop();
  // What the first instance left: a retry copy carrying the count.
  const jsm = await bus.connection.jetstreamManager();
  const info = await jsm.streams.info(`${prefix}_${jobs.name}`);
  const copy = await jsm.streams.getMessage(`${prefix}_${jobs.name}`, { seq: info.state.last_seq });
  expect(copy.header.get(JobFailureHeaders.failures)).toBe('1');
  expect(copy.header.get(JobFailureHeaders.msgId)).toBe('msg-moving');

  let secondCalls = 0;
  const second = await bus.streams.consumeEach(jobs, async () => {
    secondCalls += 1;
    throw new Error('second instance fails too');
  });
  try {
    await until(async () => (await bus.streams.deadLetters.list()).some((d) => d.msg_id === 'msg-moving'));
    expect(calls + secondCalls).toBe(3);
    const dead = (await bus.streams.deadLetters.list()).find((d) => d.msg_id === 'msg-moving')!;
    expect(dead).toMatchObject({ failures: 3, error: 'second instance fails too' });
    await bus.streams.deadLetters.redrive(dead.id); // and leave it to the next test's consumer
  } finally {
    await second.stop();
  }
});

it('dead-letters poison at once: not JSON, or not the stream schema; the others are handled', async () => {
  const seen: string[] = [];
  const consumption = await bus.streams.consumeEach(jobs, async ({ id }) => {
    seen.push(id);
    return 'done';
  });
  const before = (await bus.streams.deadLetters.list()).length;
  try {
    await bus.streams.publishJson(jobs, '{"id": "unterminated', 'poison-json');
    await bus.streams.publishJson(jobs, JSON.stringify({ id: 42 }), 'poison-schema');
    await bus.streams.publish(jobs, { id: 'after-poison' }, 'msg-after');
    await until(async () => (await bus.streams.deadLetters.list()).length === before + 2);
    await until(() => seen.includes('after-poison'));
    const dead = (await bus.streams.deadLetters.list()).slice(before);
    expect(dead.map((d) => [d.msg_id, d.failures])).toEqual([
      ['poison-json', 1],
      ['poison-schema', 1],
    ]);
    expect(dead[0].error).toMatch(/^undecodable message: /);
    expect(dead[1].error).toBe('invalid message: /id must be string');
    expect(seen).not.toContain(42);
  } finally {
    await consumption.stop();
  }
});

it('consume (batches) dead-letters an undecodable message alone and handles the rest of its batch', async () => {
  const seen: string[] = [];
  const consumption = await bus.streams.consume(batches, async (items) => {
    seen.push(...items.map((i) => i.id));
  });
  const before = (await bus.streams.deadLetters.list()).length;
  try {
    await bus.streams.publish(batches, { id: 'a' }, 'batch-a');
    await bus.streams.publishJson(batches, 'not json', 'batch-poison');
    await bus.streams.publish(batches, { id: 'b' }, 'batch-b');
    await until(() => seen.includes('a') && seen.includes('b'));
    await until(async () => (await bus.streams.deadLetters.list()).length === before + 1);
    const [dead] = (await bus.streams.deadLetters.list()).slice(before);
    expect(dead).toMatchObject({ stream: `${prefix}_batches`, msg_id: 'batch-poison', failures: 1, bytes: 8 });
    expect(await messagesIn('batches')).toBe(0);
  } finally {
    await consumption.stop();
  }
});

it('a full stream refuses a publish (discard new) and reports its fill', async () => {
  const pad = 'x'.repeat(1_000);
  let refused: unknown;
  for (let i = 0; i < 10 && !refused; i++)
    await small.streams.publish(tiny, { pad }, `pad-${i}`).catch((err: unknown) => (refused = err));
  expect(publishErrorText(refused)).toMatch(/^maximum bytes exceeded/);
  const fill = await small.streams.fill([tiny]);
  const tinyFill = fill.find((f) => f.stream === 'tiny')!;
  expect(tinyFill.maxBytes).toBe(4 * 1024);
  expect(tinyFill.messages).toBeGreaterThan(0);
  expect(tinyFill.ratio).toBeGreaterThan(0.7);
  expect(tinyFill.ratio).toBeLessThanOrEqual(1);
  expect(fill.map((f) => f.stream)).toContain('dead_letters');
});
