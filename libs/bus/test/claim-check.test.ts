import { randomBytes } from 'node:crypto';
import { connect, headers as natsHeaders, JSONCodec, nanos, type NatsConnection } from 'nats';
import {
  claimStoreName,
  formatVersion,
  MESSAGE_VERSION_HEADER,
  QueueGroups,
  REQUEST_REPLY_VERSION,
  Subjects,
  type Exchange,
  type PayerSnapshot,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { workCounts } from '@payments/metrics';
import {
  CLAIM_DIGEST_HEADER,
  CLAIM_HEADER,
  CLAIM_STORE_TTL_MS,
  ClaimWriter,
  claimDigest,
  claimStoreStream,
  connectBus,
  type Bus,
  type ClaimRouting,
} from '../src';

// Large bodies travel by claim check through the object store of the service they are addressed to:
// a request's server, a reply's asker. Only that service reads its store; the message carries the
// object's name and digest, and a body that is not the one the message names is refused and counted.

type TestRegistry = {
  requests: {
    'big.echo': Exchange<{ text: string }, { text: string }>;
    'big.size': Exchange<{ text: string }, { length: number }>;
    'big.make': Exchange<{ length: number }, { text: string }>;
    'ghost.echo': Exchange<{ text: string }, { length: number }>;
    'raw.reply': Exchange<object, { text: string }>;
  };
  streams: Record<string, never>;
};

const logger = createLogger('claim-check-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const storeOf = (service: string) => `${prefix}_claims_${service}`;
const routing: ClaimRouting<keyof TestRegistry['requests'], string> = {
  servers: {
    'big.echo': 'echoer',
    'big.size': 'echoer',
    'big.make': 'echoer',
    // A service whose store was never provisioned.
    'ghost.echo': 'ghost',
    'raw.reply': 'echoer',
  },
  recipients: ['echoer', 'asker', 'ghost'],
  storeName: (p, service) => `${p}_claims_${service}`,
};
const big = (n: number) => 'x'.repeat(n);
const json = JSONCodec();

let nc: NatsConnection;
let echoer: Bus<TestRegistry>;
let asker: Bus<TestRegistry>;

/** The stores the provisioner would create (views.os creates a missing one), TTL as in production. */
async function createStores(services: string[]): Promise<void> {
  const js = nc.jetstream();
  for (const service of services) await js.views.os(storeOf(service), { ttl: nanos(CLAIM_STORE_TTL_MS) });
}

/** The stores' last sequence (what was ever put there) and messages left. */
async function storeState(service: string): Promise<{ lastSeq: number; messages: number }> {
  const jsm = await nc.jetstreamManager();
  const { state } = await jsm.streams.info(claimStoreStream(storeOf(service)));
  return { lastSeq: state.last_seq, messages: state.messages };
}

/** Which stores' metadata subjects saw an object during `work`. */
async function storesWritten(work: () => Promise<unknown>): Promise<string[]> {
  const seen = new Set<string>();
  const sub = nc.subscribe('$O.*.M.>', {
    callback: (_err, msg) => {
      const store = msg.subject.split('.')[1];
      if (store.startsWith(`${prefix}_`)) seen.add(store);
    },
  });
  await nc.flush();
  try {
    await work();
    await nc.flush();
  } finally {
    sub.unsubscribe();
  }
  return [...seen].sort();
}

/** Sends a claim-checked request by hand, with the headers given, and returns the bus reply. */
async function sendByHand(relative: string, claim: { name: string; digest: string }) {
  const h = natsHeaders();
  h.set(MESSAGE_VERSION_HEADER, formatVersion(REQUEST_REPLY_VERSION));
  h.set(CLAIM_HEADER, claim.name);
  h.set(CLAIM_DIGEST_HEADER, claim.digest);
  const reply = await asker.connection.request(`${prefix}.${relative}`, new Uint8Array(0), {
    headers: h,
    timeout: 5_000,
  });
  return json.decode(reply.data);
}

const refusals = () => workCounts().busClaimsRefused;

beforeAll(async () => {
  nc = await connect({ servers: '127.0.0.1:4222' });
  await createStores(['echoer', 'asker']);
  const options = { url: 'nats://127.0.0.1:4222', prefix, logger, claimCheckThreshold: 1024, claimRouting: routing };
  echoer = await connectBus<TestRegistry>({ ...options, name: 'echoer' });
  asker = await connectBus<TestRegistry>({ ...options, name: 'asker', timeoutMs: 5_000 });
  echoer.serve('big.echo', async ({ text }) => ({ text }), { queue: 'echoer' });
  echoer.serve('big.size', async ({ text }) => ({ length: text.length }), { queue: 'echoer' });
  echoer.serve('big.make', async ({ length }) => ({ text: big(length) }), { queue: 'echoer' });
  await echoer.connection.flush();
});

afterAll(async () => {
  await asker?.close();
  await echoer?.close();
  const jsm = await nc.jetstreamManager();
  for (const service of ['echoer', 'asker', 'ghost'])
    await jsm.streams.delete(claimStoreStream(storeOf(service))).catch(() => undefined);
  await nc.close();
});

it("puts a large request in its server's store and a large reply in its asker's, each removed once read", async () => {
  const text = big(300_000); // three chunks of nats.js's 128 KiB
  const requestOnly = await storesWritten(async () => {
    expect(await asker.request('big.size', { text })).toEqual({ length: 300_000 });
  });
  expect(requestOnly).toEqual([storeOf('echoer')]);
  const replyOnly = await storesWritten(async () => {
    expect((await asker.request('big.make', { length: 200_000 })).text).toHaveLength(200_000);
  });
  expect(replyOnly).toEqual([storeOf('asker')]);
  const both = await storesWritten(async () => {
    expect(await asker.request('big.echo', { text })).toEqual({ text });
  });
  expect(both).toEqual([storeOf('asker'), storeOf('echoer')]);
  // The recipient removed what it read (by sequence, no purge): nothing left for the TTL.
  expect(await storeState('echoer')).toMatchObject({ messages: 0 });
  expect(await storeState('asker')).toMatchObject({ messages: 0 });
  expect((await storeState('echoer')).lastSeq).toBeGreaterThan(0);
});

it('refuses and counts a request whose object was overwritten under the same name', async () => {
  const sent = new TextEncoder().encode(JSON.stringify({ text: big(5_000) }));
  const ticket = await new ClaimWriter(asker.connection).put(storeOf('echoer'), sent);
  // Another writer of the store puts another body under the same name (nats.js replaces the object).
  const store = await nc.jetstream().views.os(storeOf('echoer'));
  await store.putBlob({ name: ticket.name }, new TextEncoder().encode(JSON.stringify({ text: 'forged' })));
  const before = refusals();
  expect(await sendByHand('big.size', ticket)).toMatchObject({ ok: false, error: { code: 'internal_error' } });
  expect(refusals()).toBe(before + 1);
});

it('refuses and counts a request whose digest header is not its object', async () => {
  const sent = new TextEncoder().encode(JSON.stringify({ text: big(5_000) }));
  const ticket = await new ClaimWriter(asker.connection).put(storeOf('echoer'), sent);
  const before = refusals();
  const tampered = { name: ticket.name, digest: claimDigest(new TextEncoder().encode('another body')) };
  expect(await sendByHand('big.size', tampered)).toMatchObject({ ok: false, error: { code: 'internal_error' } });
  expect(refusals()).toBe(before + 1);
  // The untampered ticket still reads: the refused object was left where it was, for the TTL.
  expect(await sendByHand('big.size', ticket)).toEqual({ ok: true, data: { length: 5_000 } });
});

it('refuses and counts a request whose object is missing, or whose message carries no digest', async () => {
  const before = refusals();
  const missing = await sendByHand('big.size', { name: 'no-such-object', digest: claimDigest(new Uint8Array(1)) });
  expect(missing).toMatchObject({ ok: false, error: { code: 'internal_error' } });
  const sent = new TextEncoder().encode(JSON.stringify({ text: big(5_000) }));
  const ticket = await new ClaimWriter(asker.connection).put(storeOf('echoer'), sent);
  const h = natsHeaders();
  h.set(MESSAGE_VERSION_HEADER, formatVersion(REQUEST_REPLY_VERSION));
  h.set(CLAIM_HEADER, ticket.name);
  const reply = await asker.connection.request(`${prefix}.big.size`, new Uint8Array(0), { headers: h, timeout: 5_000 });
  expect(json.decode(reply.data)).toMatchObject({ ok: false, error: { code: 'internal_error' } });
  expect(refusals()).toBe(before + 2);
});

it('throws, and counts, on a reply whose digest is not its object', async () => {
  // A stand-in server that answers with a body in the asker's store and another body's digest.
  const sub = nc.subscribe(`${prefix}.raw.reply`, {
    callback: (_err, msg) => {
      const body = new TextEncoder().encode(JSON.stringify({ ok: true, data: { text: big(5_000) } }));
      void new ClaimWriter(nc).put(storeOf('asker'), body).then((ticket) => {
        const h = natsHeaders();
        h.set(MESSAGE_VERSION_HEADER, formatVersion(REQUEST_REPLY_VERSION));
        h.set(CLAIM_HEADER, ticket.name);
        h.set(CLAIM_DIGEST_HEADER, claimDigest(new TextEncoder().encode('what the server meant')));
        msg.respond(new Uint8Array(0), { headers: h });
      });
    },
  });
  await nc.flush();
  const before = refusals();
  try {
    await expect(asker.request('raw.reply', {})).rejects.toMatchObject({
      code: 'internal_error',
      reason: 'digest_mismatch',
      store: storeOf('asker'),
    });
  } finally {
    sub.unsubscribe();
  }
  expect(refusals()).toBe(before + 1);
});

it('fails clearly when the recipient has no store: never provisioned, or not a service at all', async () => {
  await expect(asker.request('ghost.echo', { text: big(5_000) })).rejects.toMatchObject({
    code: 'service_unavailable',
    message: expect.stringContaining(
      `the claim store ${storeOf('ghost')} (stream OBJ_${storeOf('ghost')}) does not exist`,
    ),
  });
  // A reply to an inbox that names no service (nats.js's default `_INBOX.`) cannot be claim-checked:
  // the asker gets the reason at once, not a timeout.
  const reply = await nc.request(`${prefix}.big.make`, JSON.stringify({ length: 5_000 }), { timeout: 5_000 });
  expect(json.decode(reply.data)).toMatchObject({
    ok: false,
    error: { code: 'internal_error', detail: expect.stringContaining('names no service with a claim store') },
  });
});

it('writes objects nats.js reads as its own (the object store layout, digest included)', async () => {
  const data = new TextEncoder().encode(big(200_000));
  const ticket = await new ClaimWriter(nc).put(storeOf('asker'), data);
  const store = await nc.jetstream().views.os(storeOf('asker'));
  expect(await store.getBlob(ticket.name)).toEqual(data);
  expect((await store.info(ticket.name))?.digest).toBe(ticket.digest);
  await store.delete(ticket.name);
});

it("routes by the system's topology by default: a service's name is its store's and its inbox's", async () => {
  // receivables-svc asks clients-svc (clients.lookup): the request goes to clients-svc's store, the
  // reply to receivables-svc's, whose name the reply inbox `_INBOX_receivables-svc.` carries.
  const system = `${prefix}sys`;
  const js = nc.jetstream();
  const stores = [QueueGroups.clients, QueueGroups.receivables].map((service) => claimStoreName(system, service));
  for (const store of stores) await js.views.os(store, { ttl: nanos(CLAIM_STORE_TTL_MS) });
  const options = { url: 'nats://127.0.0.1:4222', prefix: system, logger, claimCheckThreshold: 1024 };
  const clients = await connectBus({ ...options, name: QueueGroups.clients });
  const receivables = await connectBus({ ...options, name: QueueGroups.receivables });
  try {
    const payer = (client_id: string): PayerSnapshot => ({
      client_id,
      name: big(100),
      cnpj_cpf: '00000000000',
      address: null,
      number: null,
      neighborhood: null,
      city: null,
      state: null,
      zip_code: null,
      email: null,
    });
    clients.serve(Subjects.clients.lookup, async ({ client_ids }) => ({ clients: client_ids.map(payer) }), {
      queue: QueueGroups.clients,
    });
    await clients.connection.flush();
    const client_ids = Array.from({ length: 100 }, (_, i) => `client-${i}`);
    const written = new Set<string>();
    const sub = nc.subscribe('$O.*.M.>', { callback: (_err, msg) => written.add(msg.subject.split('.')[1]) });
    await nc.flush();
    const reply = await receivables.request(Subjects.clients.lookup, { tenant_id: 't', client_ids });
    await nc.flush();
    sub.unsubscribe();
    expect(reply.clients).toHaveLength(100);
    expect([...written].filter((store) => store.startsWith(`${system}_`)).sort()).toEqual([...stores].sort());
  } finally {
    await receivables.close();
    await clients.close();
    const jsm = await nc.jetstreamManager();
    for (const store of stores) await jsm.streams.delete(claimStoreStream(store)).catch(() => undefined);
  }
});
