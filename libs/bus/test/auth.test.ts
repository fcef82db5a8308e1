import { randomBytes } from 'node:crypto';
import { JSONCodec, type Msg } from 'nats';
import type { Exchange } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { BusUnavailableError, checkBus, connectBus, inboxPrefixOf, type Bus } from '../src';

type TestRegistry = {
  requests: { 'who.asks': Exchange<{ n: number }, { n: number }> };
  streams: Record<string, never>;
};

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const logger = createLogger('bus-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const json = JSONCodec<unknown>();
let server: Bus<TestRegistry>;
let client: Bus<TestRegistry>;
const handled: number[] = [];

beforeAll(async () => {
  server = await connectBus<TestRegistry>({ url, prefix, name: 'auth-server', logger });
  client = await connectBus<TestRegistry>({ url, prefix, name: 'callback-svc', logger, timeoutMs: 2_000 });
  server.serve(
    'who.asks',
    async ({ n }) => {
      handled.push(n);
      return { n };
    },
    { queue: 'who' },
  );
  await server.connection.flush();
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

it("names each service's reply inboxes after it, in a subject-safe form", () => {
  expect(inboxPrefixOf('callback-svc')).toBe('_INBOX_callback-svc');
  expect(inboxPrefixOf('my app.v2')).toBe('_INBOX_my_app_v2');
});

it("asks with the service's own inbox prefix, so a server config can confine its replies", async () => {
  const replyTo: string[] = [];
  const spy = server.connection.subscribe(`${prefix}.who.asks`, {
    callback: (_err, m: Msg) => replyTo.push(m.reply ?? ''),
  });
  await server.connection.flush();
  await expect(client.request('who.asks', { n: 1 })).resolves.toEqual({ n: 1 });
  spy.unsubscribe();
  expect(replyTo).toHaveLength(1);
  expect(replyTo[0].startsWith('_INBOX_callback-svc.')).toBe(true);
});

it('serves no request whose reply subject is not an inbox (it would publish there for the asker)', async () => {
  const elsewhere: string[] = [];
  const watch = client.connection.subscribe(`${prefix}.receivables.registration`, {
    callback: (_err, m) => elsewhere.push(m.subject),
  });
  await client.connection.flush();
  client.connection.publish(`${prefix}.who.asks`, json.encode({ n: 2 }), {
    reply: `${prefix}.receivables.registration`,
  });
  // The same request with an inbox is served: when its answer is back, the other one had its turn.
  await expect(client.request('who.asks', { n: 3 })).resolves.toEqual({ n: 3 });
  await client.connection.flush();
  watch.unsubscribe();
  expect(handled).not.toContain(2);
  expect(handled).toContain(3);
  expect(elsewhere).toEqual([]);
});

it('names NATS_CREDS when the creds file cannot be read, before trying to log in', async () => {
  const failure = await connectBus({
    url,
    prefix,
    name: 'gateway',
    logger,
    credentials: { natsCreds: '/no/such/dir/gateway.creds' },
  }).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(BusUnavailableError);
  expect(failure).toMatchObject({
    problem: 'login_refused',
    message: 'cannot read the NATS_CREDS file /no/such/dir/gateway.creds (ENOENT): fix NATS_CREDS',
  });
  await expect(checkBus(url, { credentials: { natsCreds: '/no/such/dir/gateway.creds' } })).rejects.toMatchObject({
    problem: 'login_refused',
  });
});

it('names the TLS variables when the server cannot be reached over TLS', async () => {
  // The shared test server speaks no TLS: asking for it fails the handshake, before any login.
  const failure = await checkBus(url, { timeoutMs: 2_000, credentials: { natsTlsCaFile: __filename } }).catch(
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(BusUnavailableError);
  expect((failure as Error).message).toMatch(/NATS_TLS_CA_FILE/);
});
