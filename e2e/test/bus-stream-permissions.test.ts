import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { connect, headers, JSONCodec, nanos, type NatsConnection, type StreamConfig } from 'nats';
import { ClaimWriter, inboxPrefixOf } from '@payments/bus';
import {
  ADMIN_CLI_BUS_USER,
  BusServices,
  claimStoreName,
  claimStoreRecipients,
  claimStoreWriters,
  DeadLetterProducers,
  DeadLetterReaders,
  DeadLetterStream,
  JobStreams,
} from '@payments/contracts';
import { runAdmin, type AdminRun } from '../support/admin-cli';
import { ROOT } from '../support/launcher';
import { PrivateNats } from '../support/private-nats';

/**
 * JetStream is managed through its own API subjects ($JS.API.>). With the repository's server config
 * (deploy/nats, rendered for this test's prefix) on a private nats-server, provisioned by
 * `npm run admin -- bus provision` as admin, every service's user and admin-cli try to run the
 * provisioner; to create, update, shrink, purge and delete every stream and claim store; to create a
 * consumer or change their own durable; to delete another service's consumer; to read or remove from a
 * claim store not their own; to listen on another's inbox. The server refuses each attempt (a
 * permissions violation, not a silence). Each service still gets what it needs to work, and the
 * provisioning user (admin) may do all of it.
 *
 * What is expected comes from the bus topology (libs/contracts) and docs/architecture.md, never from
 * the config under test.
 */

const USERS = [...BusServices, ADMIN_CLI_BUS_USER] as const;
type User = (typeof USERS)[number];

// nats-server parses a $VARIABLE's value as a config value: a password starts with a letter.
const secret = () => `p${randomBytes(12).toString('hex')}`;
const password = new Map<string, string>([...USERS, 'admin'].map((user) => [user, secret()]));
/** render.sh's contract: each user's password is read from $NATS_<NAME>_PASSWORD. */
const passwordVariable = (user: string) => `NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
const serverEnv = Object.fromEntries([...password].map(([user, pass]) => [passwordVariable(user), pass]));

const prefix = `t${randomBytes(5).toString('hex')}`;
const json = JSONCodec<Record<string, unknown>>();
/** One JetStream API request a user tries: what it would do, its subject, its body (none: empty). */
type Attempt = [what: string, subject: string, body: Record<string, unknown> | undefined];

const jobStreamName = (name: string) => `${prefix}_${name}`;
const deadLetters = jobStreamName(DeadLetterStream.name);
const stores = claimStoreRecipients().map((recipient) => ({
  recipient,
  bucket: claimStoreName(prefix, recipient),
  stream: `OBJ_${claimStoreName(prefix, recipient)}`,
}));
/** Every stream of the system: the job streams, the dead letters, and each claim store's. */
const allStreams = [
  ...JobStreams.map((p) => jobStreamName(p.stream.name)),
  deadLetters,
  ...stores.map((s) => s.stream),
];

/** The body put in each claim store once provisioned, and its object's name there, by store. */
const SEEDED_BODY = 'whsec_not-for-your-eyes';
const seeded = new Map<string, string>();
/** An object's metadata subject: nats.js's layout, the padded base64url of its name. */
const metaSubject = (bucket: string, name: string) =>
  `$O.${bucket}.M.${Buffer.from(name).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`;

let nats: PrivateNats;
let admin: NatsConnection;
const connections: NatsConnection[] = [];
/** Each stream's configuration as provisioned: what every refused attempt must leave as it was. */
const provisioned = new Map<string, StreamConfig>();

beforeAll(async () => {
  const config = execFileSync('sh', [join(ROOT, 'deploy', 'nats', 'render.sh'), prefix], { encoding: 'utf8' });
  nats = await PrivateNats.create({ config, env: serverEnv });
  admin = await connectAs('admin');
  await provisionAsAdmin(admin);
  const jsm = await admin.jetstreamManager();
  for (const name of allStreams) provisioned.set(name, (await jsm.streams.info(name)).config);
}, 60_000);

afterAll(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  await nats?.destroy();
});

async function connectAs(user: User | 'admin'): Promise<NatsConnection> {
  const c = await connect({
    servers: nats.url,
    user,
    pass: password.get(user),
    name: `probe-${user}`,
    inboxPrefix: inboxPrefixOf(user),
    maxReconnectAttempts: 0,
  });
  connections.push(c);
  return c;
}

/** `npm run admin -- bus provision --json` on this test's server, as `user`, for `busPrefix`. */
function provisionAs(user: User | 'admin', busPrefix: string): Promise<AdminRun> {
  return runAdmin('postgres://unused', ['bus', 'provision', '--json'], {
    env: {
      NATS_URL: nats.url,
      BUS_PREFIX: busPrefix,
      NATS_USER: user,
      NATS_PASSWORD: password.get(user) ?? '',
      STREAM_MAX_BYTES: String(8 * 1024 * 1024),
    },
  });
}

/**
 * What the provisioner makes, as an operator runs it (`npm run admin -- bus provision`, as the admin
 * user): every job stream with its durable consumer, the dead letters, and one claim store per
 * service that is sent large bodies; then one message in each, so that a read or a purge that got
 * through would be seen.
 */
async function provisionAsAdmin(c: NatsConnection): Promise<void> {
  const run = await provisionAs('admin', prefix);
  if (run.code !== 0) throw new Error(`bus provision exited ${run.code}: ${run.stderr}`);
  const js = c.jetstream();
  for (const { stream } of JobStreams)
    await js.publish(`${prefix}.${stream.subject}`, json.encode({ probe: stream.name }));
  await js.publish(`${prefix}.${DeadLetterStream.subject}`, json.encode({ probe: 'dead letter' }));
  for (const { bucket } of stores) {
    const { name } = await new ClaimWriter(c).put(bucket, new TextEncoder().encode(SEEDED_BODY));
    seeded.set(bucket, name);
  }
}

/** How the server met one JetStream API request. */
type Outcome = 'refused' | 'no answer' | `answered ${string}` | `failed ${string}`;

/**
 * One request, as a JetStream client makes it. A publish the user may not make is refused by the
 * server (-ERR 'Permissions Violation for Publish to ...'), which nats.js turns into a
 * PERMISSIONS_VIOLATION error of that request.
 */
async function attempt(c: NatsConnection, subject: string, body?: Record<string, unknown>): Promise<Outcome> {
  try {
    const reply = await c.request(subject, body ? json.encode(body) : undefined, { timeout: 2_000 });
    return `answered ${new TextDecoder().decode(reply.data).slice(0, 200)}`;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'PERMISSIONS_VIOLATION') return 'refused';
    if (e.code === 'TIMEOUT') return 'no answer';
    return `failed ${e.code ?? ''} ${e.message ?? String(err)}`;
  }
}

/**
 * A subscription: one the user may not make is refused by the server, and nats.js ends the
 * subscription with the error; one it may make receives what `publish` (admin's) sends there.
 */
async function subscribeOutcome(c: NatsConnection, subject: string, publish: () => Promise<void>): Promise<Outcome> {
  const sub = c.subscribe(subject);
  let outcome: Outcome = 'no answer';
  const ended = (async () => {
    try {
      for await (const m of sub) {
        outcome = `answered a message on ${m.subject}`;
        return;
      }
    } catch (err) {
      const e = err as { code?: string; message?: string };
      outcome = e.code === 'PERMISSIONS_VIOLATION' ? 'refused' : `failed ${e.code ?? ''} ${e.message ?? String(err)}`;
    }
  })();
  await c.flush();
  await publish();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, 2_000)))]);
  clearTimeout(timer);
  sub.unsubscribe();
  return outcome;
}

/** Sends a message to `user`'s inbox, as a reply would. */
const replyTo = (user: string) => async () => {
  admin.publish(`${inboxPrefixOf(user)}.probe`, json.encode({ secret: 'whsec_a-reply' }));
  await admin.flush();
};

/** Puts a body in a claim store, as its writers do. */
const putClaim = (bucket: string) => async () => {
  await new ClaimWriter(admin).put(bucket, new TextEncoder().encode('a large body'));
};

/** A stream's configuration with a subject added that captures another service's replies. */
function withInboxOf(configs: Map<string, StreamConfig>, name: string, victim: string): StreamConfig {
  const config = configs.get(name);
  if (!config) throw new Error(`stream ${name} was not provisioned`);
  return { ...config, subjects: [...config.subjects, `${inboxPrefixOf(victim)}.${name}.>`] };
}

function shrunk(configs: Map<string, StreamConfig>, name: string): StreamConfig {
  const config = configs.get(name);
  if (!config) throw new Error(`stream ${name} was not provisioned`);
  return { ...config, max_msgs: 1 };
}

/** Every attempt on JetStream's management API: [what, subject, body]. */
function managementAttempts(victim: string, configs: Map<string, StreamConfig>): Attempt[] {
  const attempts: Attempt[] = [];
  const spy = `${prefix}_spy`;
  attempts.push([
    `create a stream of its own on ${victim}'s inbox`,
    `$JS.API.STREAM.CREATE.${spy}`,
    { name: spy, subjects: [`${inboxPrefixOf(victim)}.>`], storage: 'memory' },
  ]);
  attempts.push([`delete a stream ${spy}`, `$JS.API.STREAM.DELETE.${spy}`, undefined]);
  for (const name of allStreams) {
    const config = configs.get(name) ?? {};
    attempts.push([`create ${name}`, `$JS.API.STREAM.CREATE.${name}`, { ...config }]);
    attempts.push([
      `update ${name} to take ${victim}'s inbox`,
      `$JS.API.STREAM.UPDATE.${name}`,
      { ...withInboxOf(configs, name, victim) },
    ]);
    attempts.push([`shrink ${name} to one message`, `$JS.API.STREAM.UPDATE.${name}`, { ...shrunk(configs, name) }]);
    attempts.push([`purge ${name}`, `$JS.API.STREAM.PURGE.${name}`, undefined]);
    attempts.push([`delete ${name}`, `$JS.API.STREAM.DELETE.${name}`, undefined]);
  }
  return attempts;
}

/** Deleting every job stream's consumer that is not `user`'s own. */
function consumerDeletions(user: User | 'admin'): Array<[string, string]> {
  return JobStreams.filter((p) => p.consumer !== user).map((p) => {
    const stream = jobStreamName(p.stream.name);
    return [
      `delete ${p.consumer}'s consumer ${p.stream.consumer}`,
      `$JS.API.CONSUMER.DELETE.${stream}.${p.stream.consumer}`,
    ];
  });
}

/** Creating a consumer of one's own on every job stream (JetStream allows one per work queue: the provisioner's). */
function spyConsumers(): Attempt[] {
  return JobStreams.flatMap((p): Attempt[] => {
    const stream = jobStreamName(p.stream.name);
    const spy = { name: 'spy', ack_policy: 'explicit', deliver_policy: 'all' };
    return [
      [`create a consumer on ${stream}`, `$JS.API.CONSUMER.CREATE.${stream}`, { stream_name: stream, config: spy }],
      [
        `create a named consumer on ${stream}`,
        `$JS.API.CONSUMER.CREATE.${stream}.spy`,
        { stream_name: stream, config: spy },
      ],
    ];
  });
}

/** Creating, or changing, every job stream's durable consumer (here: one message in flight at most). */
function durableChanges(): Attempt[] {
  return JobStreams.flatMap((p): Attempt[] => {
    const stream = jobStreamName(p.stream.name);
    const config = {
      durable_name: p.stream.consumer,
      ack_policy: 'explicit',
      deliver_policy: 'all',
      max_ack_pending: 1,
    };
    return [
      [
        `create or change ${p.stream.consumer} on ${stream}`,
        `$JS.API.CONSUMER.CREATE.${stream}.${p.stream.consumer}`,
        { stream_name: stream, config },
      ],
      [
        `create or change the durable ${p.stream.consumer} on ${stream}`,
        `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${p.stream.consumer}`,
        { stream_name: stream, config },
      ],
    ];
  });
}

/**
 * Reading a claim store (a message by sequence or by subject, directly or through a consumer of one's
 * own), and removing a body from it, as its recipient does once it has read it.
 */
function claimReads(store: (typeof stores)[number]): Attempt[] {
  const { stream, bucket } = store;
  const meta = metaSubject(bucket, seeded.get(bucket) ?? '');
  const deliver = (name: string) => ({ ack_policy: 'explicit', deliver_policy: 'all', name });
  return [
    [`get a message of ${stream}`, `$JS.API.STREAM.MSG.GET.${stream}`, { seq: 1 }],
    [`get an object's metadata in ${stream}`, `$JS.API.STREAM.MSG.GET.${stream}`, { last_by_subj: meta }],
    [`direct-get a message of ${stream}`, `$JS.API.DIRECT.GET.${stream}`, { seq: 1 }],
    [`direct-get an object's metadata in ${stream}`, `$JS.API.DIRECT.GET.${stream}.${meta}`, undefined],
    [
      `create an ephemeral consumer on ${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}`,
      { stream_name: stream, config: { ack_policy: 'explicit', deliver_policy: 'all' } },
    ],
    [
      `create a named consumer on ${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}.spy1`,
      { stream_name: stream, config: deliver('spy1') },
    ],
    [
      `create a filtered consumer on ${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}.spy2.${meta}`,
      { stream_name: stream, config: { ...deliver('spy2'), filter_subject: meta } },
    ],
    [
      `create a durable consumer on ${stream}`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.spy3`,
      { stream_name: stream, config: { ack_policy: 'explicit', deliver_policy: 'all', durable_name: 'spy3' } },
    ],
    // Last: admin's reads above still find the message.
    [`delete a message of ${stream}`, `$JS.API.STREAM.MSG.DELETE.${stream}`, { seq: 1 }],
  ];
}

describe.each(USERS)('as %s', (user) => {
  let c: NatsConnection;
  beforeAll(async () => {
    c = await connectAs(user);
  });

  it('may not run the provisioner: `npm run admin -- bus provision` is refused and creates nothing', async () => {
    const fresh = `${prefix}${user.replace(/-/g, '')}`;
    const run = await provisionAs(user, fresh);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/permissions violation/i);
    const names = await (await admin.jetstreamManager()).streams.names().next();
    expect(names.filter((name) => name.includes(fresh))).toEqual([]);
  });

  it('may not create, update, shrink, purge or delete any stream or claim store', async () => {
    const victim = user === 'callback-svc' ? 'gateway' : 'callback-svc';
    const allowed: string[] = [];
    for (const [what, subject, body] of managementAttempts(victim, provisioned)) {
      const outcome = await attempt(c, subject, body);
      if (outcome !== 'refused') allowed.push(`${what}: ${outcome}`);
    }
    expect(allowed).toEqual([]);
  });

  it("may not delete another service's consumer", async () => {
    const allowed: string[] = [];
    for (const [what, subject] of consumerDeletions(user)) {
      const outcome = await attempt(c, subject);
      if (outcome !== 'refused') allowed.push(`${what}: ${outcome}`);
    }
    expect(allowed).toEqual([]);
  });

  it('may not create a consumer, nor change its own: the provisioner makes them', async () => {
    const allowed: string[] = [];
    for (const [what, subject, body] of [...spyConsumers(), ...durableChanges()]) {
      const outcome = await attempt(c, subject, body);
      if (outcome !== 'refused') allowed.push(`${what}: ${outcome}`);
    }
    expect(allowed).toEqual([]);
  });

  it('may not read, nor remove anything from, a claim store that is not its own', async () => {
    const allowed: string[] = [];
    for (const store of stores.filter((s) => s.recipient !== user)) {
      for (const [what, subject, body] of claimReads(store)) {
        const outcome = await attempt(c, subject, body);
        if (outcome !== 'refused') allowed.push(`${what}: ${outcome}`);
      }
      const listened = await subscribeOutcome(c, `$O.${store.bucket}.>`, putClaim(store.bucket));
      if (listened !== 'refused') allowed.push(`listen on ${store.bucket}: ${listened}`);
    }
    expect(allowed).toEqual([]);
  });

  it("may not listen on another service's inbox", async () => {
    const allowed: string[] = [];
    for (const other of USERS.filter((u) => u !== user)) {
      const outcome = await subscribeOutcome(c, `${inboxPrefixOf(other)}.>`, replyTo(other));
      if (outcome !== 'refused') allowed.push(`listen on ${other}'s inbox: ${outcome}`);
    }
    expect(allowed).toEqual([]);
  });
});

/** The subjects of every stream `user` may publish to: jobs (outbox, re-drives), dead letters, claim stores. */
function publishedStreams(user: User): Array<[stream: string, subject: string]> {
  const redrives = (DeadLetterReaders as readonly string[]).includes(user);
  const jobs = JobStreams.filter((p) => redrives || (p.producers as readonly string[]).includes(user)).map(
    (p): [string, string] => [jobStreamName(p.stream.name), `${prefix}.${p.stream.subject}`],
  );
  const dead: Array<[string, string]> = (DeadLetterProducers as readonly string[]).includes(user)
    ? [[deadLetters, `${prefix}.${DeadLetterStream.subject}`]]
    : [];
  const claims = stores
    .filter((s) => (claimStoreWriters(s.recipient) as readonly string[]).includes(user))
    .map((s): [string, string] => [s.stream, metaSubject(s.bucket, seeded.get(s.bucket) ?? '')]);
  return [...jobs, ...dead, ...claims];
}

describe.each(USERS)('as %s, a publisher', (user) => {
  it('cannot purge or trim a stream it publishes to with a rollup header', async () => {
    const js = (await connectAs(user)).jetstream();
    const stored: string[] = [];
    for (const [stream, subject] of publishedStreams(user)) {
      // `Nats-Rollup: all` would purge the whole stream; `sub`, every other message of its subject.
      for (const rollup of ['all', 'sub']) {
        const h = headers();
        h.set('Nats-Rollup', rollup);
        const outcome = await js.publish(subject, json.encode({ rollup }), { headers: h }).then(
          () => 'stored',
          (err: Error) => `refused: ${err.message}`,
        );
        if (outcome === 'stored') stored.push(`${stream} rolled up (${rollup})`);
      }
    }
    expect(stored).toEqual([]);
  });
});

describe('after every service tried', () => {
  it('left every stream, consumer and claim as the provisioner made it', async () => {
    const jsm = await admin.jetstreamManager();
    for (const name of allStreams) {
      const { config } = await jsm.streams.info(name);
      const before = provisioned.get(name);
      expect({ name, subjects: config.subjects, maxMsgs: config.max_msgs, maxBytes: config.max_bytes }).toEqual({
        name,
        subjects: before?.subjects,
        maxMsgs: before?.max_msgs,
        maxBytes: before?.max_bytes,
      });
    }
    // Nothing purged: each job stream and the dead letters still hold their message, each claim store its object.
    for (const name of [...JobStreams.map((p) => jobStreamName(p.stream.name)), deadLetters])
      expect([name, (await jsm.streams.info(name)).state.messages]).toEqual([name, 1]);
    for (const { bucket } of stores) {
      const body = await (await admin.jetstream().views.os(bucket)).getBlob(seeded.get(bucket) ?? '');
      expect([bucket, new TextDecoder().decode(body ?? undefined)]).toEqual([bucket, SEEDED_BODY]);
    }
    for (const { stream } of JobStreams)
      expect((await jsm.consumers.info(jobStreamName(stream.name), stream.consumer)).name).toBe(stream.consumer);
  });
});

/** What a user's request got: undefined when answered without a JetStream error; else the refusal or the error. */
async function shortOf(
  c: NatsConnection,
  subject: string,
  body?: Record<string, unknown> | string,
): Promise<string | undefined> {
  try {
    const data = typeof body === 'string' ? body : body ? json.encode(body) : undefined;
    const reply = await c.request(subject, data, { timeout: 5_000 });
    const text = new TextDecoder().decode(reply.data);
    return text.includes('"error"') ? `${subject}: ${text}` : undefined;
  } catch (err) {
    return `${subject}: ${(err as { code?: string }).code ?? ''} ${(err as Error).message}`;
  }
}

describe.each(BusServices)('%s keeps what it needs to work', (service) => {
  let c: NatsConnection;
  beforeAll(async () => {
    c = await connectAs(service);
  });

  it('the info of the streams and claim stores it uses', async () => {
    const used = JobStreams.filter((p) => p.consumer === service || p.producers.includes(service));
    const deadLetterUser =
      DeadLetterProducers.includes(service) || (DeadLetterReaders as readonly string[]).includes(service);
    const storesUsed = stores.filter(
      (s) => s.recipient === service || claimStoreWriters(s.recipient).includes(service),
    );
    const subjects = [
      '$JS.API.INFO',
      ...used.map((p) => `$JS.API.STREAM.INFO.${jobStreamName(p.stream.name)}`),
      ...(deadLetterUser ? [`$JS.API.STREAM.INFO.${deadLetters}`] : []),
      ...storesUsed.map((s) => `$JS.API.STREAM.INFO.${s.stream}`),
    ];
    const failed: string[] = [];
    for (const subject of subjects) {
      const failure = await shortOf(c, subject);
      if (failure) failed.push(failure);
    }
    expect(failed).toEqual([]);
  });

  it('pulls from and acks its own durable consumers', async () => {
    const jsm = await admin.jetstreamManager();
    for (const { stream } of JobStreams.filter((p) => p.consumer === service)) {
      const name = jobStreamName(stream.name);
      await admin.jetstream().publish(`${prefix}.${stream.subject}`, json.encode({ probe: 'to pull' }));
      expect(await shortOf(c, `$JS.API.CONSUMER.INFO.${name}.${stream.consumer}`)).toBeUndefined();
      const pulled = await c.request(
        `$JS.API.CONSUMER.MSG.NEXT.${name}.${stream.consumer}`,
        json.encode({ batch: 1, expires: nanos(2_000) }),
        // The message comes on its own subject, not the request's inbox token: a one-off inbox.
        { timeout: 5_000, noMux: true },
      );
      expect(pulled.reply).toMatch(`$JS.ACK.${name}.${stream.consumer}.`);
      const before = (await jsm.streams.info(name)).state.messages;
      // A double ack: JetStream answers once the ack is taken, and the work queue lets the message go.
      await c.request(pulled.reply ?? '', '+ACK', { timeout: 5_000 });
      expect((await jsm.streams.info(name)).state.messages).toBe(before - 1);
    }
  });

  it('puts bodies in the claim stores it writes to, and reads and removes them from its own', async () => {
    const js = c.jetstream();
    for (const store of stores.filter((s) => claimStoreWriters(s.recipient).includes(service))) {
      const ack = await js.publish(`$O.${store.bucket}.C.${service}`, new TextEncoder().encode('a chunk'));
      expect(ack.stream).toBe(store.stream);
      await js.publish(`$O.${store.bucket}.M.${service}`, json.encode({ name: service }));
    }
    const own = stores.find((s) => s.recipient === service);
    if (!own) return;
    const jsm = await admin.jetstreamManager();
    const { last_seq: last } = (await jsm.streams.info(own.stream)).state;
    expect(await shortOf(c, `$JS.API.STREAM.MSG.GET.${own.stream}`, { seq: last })).toBeUndefined();
    expect(
      await shortOf(c, `$JS.API.STREAM.MSG.GET.${own.stream}`, {
        last_by_subj: metaSubject(own.bucket, seeded.get(own.bucket) ?? ''),
      }),
    ).toBeUndefined();
    expect(await shortOf(c, `$JS.API.STREAM.MSG.DELETE.${own.stream}`, { seq: last })).toBeUndefined();
  });
});

it('the dead letters are read and removed by their readers only', async () => {
  const jsm = await admin.jetstreamManager();
  for (const reader of DeadLetterReaders) {
    const c = await connectAs(reader);
    await admin.jetstream().publish(`${prefix}.${DeadLetterStream.subject}`, json.encode({ probe: reader }));
    const { last_seq: last } = (await jsm.streams.info(deadLetters)).state;
    expect(await shortOf(c, `$JS.API.STREAM.INFO.${deadLetters}`)).toBeUndefined();
    expect(await shortOf(c, `$JS.API.STREAM.MSG.GET.${deadLetters}`, { seq: last })).toBeUndefined();
    expect(await shortOf(c, `$JS.API.STREAM.MSG.DELETE.${deadLetters}`, { seq: last })).toBeUndefined();
  }
  const failed: string[] = [];
  for (const user of USERS.filter((u) => !(DeadLetterReaders as readonly string[]).includes(u))) {
    const c = await connectAs(user);
    for (const subject of [`$JS.API.STREAM.MSG.GET.${deadLetters}`, `$JS.API.STREAM.MSG.DELETE.${deadLetters}`]) {
      const outcome = await attempt(c, subject, { seq: 1 });
      if (outcome !== 'refused') failed.push(`${user} ${subject}: ${outcome}`);
    }
  }
  expect(failed).toEqual([]);
});

describe('as admin, the provisioning user', () => {
  /** The JetStream API's answer, when it is an error: admin's attempts must all succeed. */
  async function failure(subject: string, body: Record<string, unknown> | undefined): Promise<string | undefined> {
    const reply = await admin.request(subject, body ? json.encode(body) : undefined, { timeout: 5_000 });
    // DIRECT.GET answers with the message itself, its stream in a header (a 404 status when there is none).
    if (subject.startsWith('$JS.API.DIRECT.GET.'))
      return reply.headers?.get('Nats-Stream') ? undefined : `${subject}: ${reply.headers?.code ?? 'no stream header'}`;
    const answer = json.decode(reply.data);
    return 'error' in answer ? `${subject}: ${JSON.stringify(answer.error)}` : undefined;
  }

  it('may listen on every inbox and claim store, and read every claim store', async () => {
    for (const user of USERS)
      expect(await subscribeOutcome(admin, `${inboxPrefixOf(user)}.>`, replyTo(user))).toBe(
        `answered a message on ${inboxPrefixOf(user)}.probe`,
      );
    const failed: string[] = [];
    for (const store of stores) {
      expect(await subscribeOutcome(admin, `$O.${store.bucket}.>`, putClaim(store.bucket))).toMatch(
        `answered a message on $O.${store.bucket}.C.`,
      );
      for (const [, subject, body] of claimReads(store)) {
        const error = await failure(subject, body);
        if (error) failed.push(error);
      }
    }
    expect(failed).toEqual([]);
  });

  it('may create, change and delete any consumer, and create, update, shrink, purge and delete every stream and claim store', async () => {
    const failed: string[] = [];
    for (const [, subject] of consumerDeletions('admin')) {
      const error = await failure(subject, undefined);
      if (error) failed.push(error);
    }
    // The durables again, as the provisioner makes them (a work queue takes one consumer: no spy beside them).
    for (const [, subject, body] of durableChanges()) {
      const error = await failure(subject, body);
      if (error) failed.push(error);
    }
    // Each stream as it is now: a create with the same configuration is what the provisioner repeats.
    const jsm = await admin.jetstreamManager();
    const current = new Map<string, StreamConfig>();
    for (const name of allStreams) current.set(name, (await jsm.streams.info(name)).config);
    for (const [, subject, body] of managementAttempts('callback-svc', current)) {
      const error = await failure(subject, body);
      if (error) failed.push(error);
    }
    expect(failed).toEqual([]);
    const left = await jsm.streams.names().next();
    expect(left.filter((name) => name.includes(prefix))).toEqual([]);
  });
});
