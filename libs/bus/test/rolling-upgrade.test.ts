import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headers as natsHeaders, JSONCodec } from 'nats';
import {
  CallbackRequestSchema,
  compileValidator,
  MESSAGE_VERSION_HEADER,
  Streams,
  type BusReply,
  type Exchange,
  type RegistrationJob,
  type StreamSpec,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus, type Consumption } from '../src';

/**
 * Rolling upgrades on a real NATS (docs/architecture.md, "Rolling upgrades"): version N's readers take
 * every stream message as N-1 (1.0) wrote it (test-vectors/bus/1.0.json); an N-1 registration worker,
 * a process of its own with the frozen 1.0 schema (support/previous-reader.ts), takes N's 1.1 jobs
 * (queued_at added); both share one durable consumer of one stream; a job of an unknown major is
 * dead-lettered once with the reason; a request of an unknown major is answered 503 with it.
 */

interface Fixture {
  name: string;
  stream: string;
  msg_id: string;
  payload: Record<string, unknown>;
}
const fixtures = (
  JSON.parse(readFileSync(join(__dirname, '../../../test-vectors/bus/1.0.json'), 'utf8')) as { messages: Fixture[] }
).messages;
const specs: StreamSpec[] = Object.values(Streams);
const specOf = (name: string): StreamSpec => specs.find((s) => s.name === name)!;

const logger = createLogger('rolling-upgrade-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
let bus: Bus;
const deadLettered: string[] = [];

beforeAll(async () => {
  bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'current', logger });
  bus.streams.onDeadLetter((stream) => deadLettered.push(stream));
  await bus.streams.provision(...specs);
});

afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [...specs.map((s) => s.name), 'dead_letters'])
    await jsm.streams.delete(`${prefix}_${name}`).catch(() => undefined);
  await bus.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (check: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(25);
  }
};
const pending = async (spec: StreamSpec) =>
  (await (await bus.connection.jetstreamManager()).streams.info(`${prefix}_${spec.name}`)).state.messages;

/** A registration job as version 1.0 wrote it (no version, no queued_at), and as N writes it. */
const jobV1_0 = (): RegistrationJob => ({ tenant_id: randomUUID(), receivable_ids: [randomUUID()] });
const jobV1_1 = (): RegistrationJob => ({ ...jobV1_0(), queued_at: new Date().toISOString() });

/** The N-1 registration worker in its own process; resolves once it consumes. */
async function startPrevious(): Promise<{ jobs: RegistrationJob[]; stop(): Promise<void> }> {
  const tsx = join(__dirname, '../../../node_modules/.bin/tsx');
  const child: ChildProcess = spawn(tsx, [join(__dirname, 'support/previous-reader.ts'), prefix], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const jobs: RegistrationJob[] = [];
  let ready = false;
  let buffered = '';
  let errors = '';
  child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      if (line === 'ready') ready = true;
      else jobs.push(JSON.parse(line) as RegistrationJob);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until(() => ready || child.exitCode !== null, 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  if (!ready) throw new Error(`the N-1 reader did not start: ${errors}`);
  return {
    jobs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

it('N reads every stream message as N-1 (1.0) wrote it', async () => {
  const seen = new Map<string, unknown[]>();
  const record = (stream: string, item: unknown) => seen.set(stream, [...(seen.get(stream) ?? []), item]);
  const consumptions: Consumption[] = [];
  for (const spec of [Streams.receivableRegistrations, Streams.receivableCancellations, Streams.bookletBuilds])
    consumptions.push(
      await bus.streams.consumeEach(spec, async (job) => {
        record(spec.name, job);
        return 'done';
      }),
    );
  // The callbacks stream has no messageSchema: callback-svc's ingest checks each request (as here).
  const validRequest = compileValidator(CallbackRequestSchema);
  consumptions.push(
    await bus.streams.consume(Streams.callbackRequests, async (batches) => {
      for (const batch of batches) {
        expect(batch.requests.every((r) => validRequest(r).ok)).toBe(true);
        record(Streams.callbackRequests.name, batch);
      }
    }),
  );
  try {
    for (const f of fixtures) await bus.streams.publishJson(specOf(f.stream), JSON.stringify(f.payload), f.msg_id);
    await until(() => [...seen.values()].flat().length === fixtures.length);
    for (const spec of specs)
      expect(seen.get(spec.name)).toEqual(fixtures.filter((f) => f.stream === spec.name).map((f) => f.payload));
    expect(deadLettered).toEqual([]);
  } finally {
    for (const c of consumptions) await c.stop();
  }
});

it('an N-1 instance (another process) and an N instance share the registration stream', async () => {
  const spec = Streams.receivableRegistrations;
  const previous = await startPrevious();
  let current: Consumption | undefined;
  try {
    // N-1 alone takes N's jobs: queued_at and the version field are unknown to it, and stripped.
    const newer = Array.from({ length: 10 }, jobV1_1);
    for (const job of newer) await bus.streams.publish(spec, job, `reg_${job.receivable_ids[0]}`);
    await until(() => previous.jobs.length === newer.length);
    expect(previous.jobs).toEqual(newer.map(({ tenant_id, receivable_ids }) => ({ tenant_id, receivable_ids })));

    // Both at once, on one durable consumer: 1.0 and 1.1 jobs mixed, each taken once, by either.
    const byCurrent: RegistrationJob[] = [];
    current = await bus.streams.consumeEach(spec, async (job) => {
      byCurrent.push(job);
      return 'done';
    });
    const mixed = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? jobV1_0() : jobV1_1()));
    for (const job of mixed) {
      const msgId = `reg_${job.receivable_ids[0]}`;
      if (job.queued_at) await bus.streams.publish(spec, job, msgId);
      else await bus.streams.publishJson(spec, JSON.stringify(job), msgId); // as 1.0 wrote it
    }
    const byPrevious = () => previous.jobs.slice(newer.length);
    await until(() => byCurrent.length + byPrevious().length === mixed.length);
    await sleep(300);
    const taken = [...byCurrent, ...byPrevious()].map((j) => j.receivable_ids[0]);
    expect(taken.sort()).toEqual(mixed.map((j) => j.receivable_ids[0]).sort());
    // Each read it as its own version: N kept queued_at, N-1 never sees it.
    const sent = new Map(mixed.map((j) => [j.receivable_ids[0], j]));
    for (const job of byCurrent) expect(job).toEqual(sent.get(job.receivable_ids[0]));
    for (const job of byPrevious()) expect(job).not.toHaveProperty('queued_at');
    expect(deadLettered).toEqual([]);
    expect(await pending(spec)).toBe(0);
    process.stdout.write(`mixed jobs taken: ${byCurrent.length} by N, ${byPrevious().length} by N-1\n`);
  } finally {
    await current?.stop();
    await previous.stop();
  }
}, 60_000);

it('dead-letters a job of an unknown major once, with the reason, instead of retrying it', async () => {
  const spec = Streams.bookletBuilds;
  const handled: unknown[] = [];
  const consumption = await bus.streams.consumeEach(
    spec,
    async (job) => {
      handled.push(job);
      return 'done';
    },
    { ackWaitMs: 500 },
  );
  try {
    const msgId = `booklet_${randomUUID()}`;
    const job = { v: '2.0', tenant_id: randomUUID(), booklet_id: randomUUID(), pages: 'a 2.0 field' };
    await bus.streams.publishJson(spec, JSON.stringify(job), msgId);
    await until(() => deadLettered.length === 1);
    await sleep(1_500); // three ack waits: a message left unacked would have come back by now
    expect(handled).toEqual([]);
    expect(deadLettered).toEqual([spec.name]);
    expect(await pending(spec)).toBe(0);
    const letters = (await bus.streams.deadLetters.list()).filter((l) => l.msg_id === msgId);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      stream: `${prefix}_${spec.name}`,
      failures: 1,
      error: 'unsupported message version 2.0: this reader knows major 1 (1.0)',
    });
  } finally {
    await consumption.stop();
  }
});

describe('request-reply', () => {
  type Registry = { requests: { echo: Exchange<{ text: string }, { text: string }> }; streams: Record<string, never> };
  let server: Bus<Registry>;
  const json = JSONCodec<unknown>();
  const ask = async (body: unknown, version?: string) => {
    const h = natsHeaders();
    if (version) h.set(MESSAGE_VERSION_HEADER, version);
    const reply = await bus.connection.request(`${prefix}.echo`, json.encode(body), { timeout: 2_000, headers: h });
    return {
      body: json.decode(reply.data) as BusReply<{ text: string }>,
      version: reply.headers?.get(MESSAGE_VERSION_HEADER),
    };
  };

  beforeAll(async () => {
    server = await connectBus<Registry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'echo-server', logger });
    server.serve('echo', async ({ text }) => ({ text }), { queue: 'echo' });
    // The subscription reaches the server before the first request (a loaded machine raced it: 503).
    await server.connection.flush();
  });
  afterAll(() => server.close());

  it('serves a request without a version (1.0) or of a newer minor, its reply versioned', async () => {
    expect(await ask({ text: 'hi' })).toEqual({ body: { ok: true, data: { text: 'hi' } }, version: '1.0' });
    expect((await ask({ text: 'hi', mood: 'new in 1.3' }, '1.3')).body).toEqual({ ok: true, data: { text: 'hi' } });
  });

  it('answers a request of an unknown major with a 503 naming the versions', async () => {
    expect((await ask({ text: 'hi' }, '2.0')).body).toEqual({
      ok: false,
      error: {
        code: 'service_unavailable',
        detail: 'unsupported message version 2.0: this reader knows major 1 (1.0)',
      },
    });
  });
});
