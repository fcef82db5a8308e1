import { randomBytes } from 'node:crypto';
import { ServiceError, type Exchange } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus } from '../src';
import { testClaimStores, type TestClaimStores } from './claim-stores';

/** This test's subjects and their types, as BusRegistry holds the system's. */
type TestRegistry = {
  requests: {
    'math.double': Exchange<{ n: number }, { double: number }>;
    'things.get': Exchange<{ id: string }, never>;
    'things.crash': Exchange<object, never>;
    echo: Exchange<{ text: string }, { text: string; length: number }>;
    'slow.op': Exchange<object, { done: boolean }>;
    'nobody.home': Exchange<object, never>;
  };
  streams: Record<string, never>;
};

const logger = createLogger('bus-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
let server: Bus<TestRegistry>;
let client: Bus<TestRegistry>;
// Large bodies go to their recipient's claim store: the server's for requests, the asker's for replies.
let claims: TestClaimStores<keyof TestRegistry['requests']>;

beforeAll(async () => {
  claims = await testClaimStores(
    'nats://127.0.0.1:4222',
    prefix,
    {
      'math.double': 'server',
      'things.get': 'server',
      'things.crash': 'server',
      echo: 'server',
      'slow.op': 'slow',
      'nobody.home': 'nobody',
    },
    ['client', 'big'],
  );
  server = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'server',
    logger,
    claimCheckThreshold: 2048,
    claimRouting: claims.routing,
  });
  client = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'client',
    logger,
    claimCheckThreshold: 2048,
    claimRouting: claims.routing,
    timeoutMs: 2000,
  });
  server.serve('math.double', async ({ n }) => ({ double: n * 2 }), {
    queue: 'math',
  });
  server.serve(
    'things.get',
    async ({ id }) => {
      throw new ServiceError('not_found', `thing ${id} not found`, [{ path: 'id', message: 'unknown', in: 'path' }]);
    },
    { queue: 'things' },
  );
  server.serve(
    'things.crash',
    async () => {
      throw new Error('secret internals');
    },
    { queue: 'things' },
  );
  server.serve('echo', async ({ text }) => ({ text, length: text.length }), { queue: 'echo' });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await claims?.remove();
});

it('answers a request with the handler result', async () => {
  await expect(client.request('math.double', { n: 21 })).resolves.toEqual({ double: 42 });
});

it('carries a ServiceError back with its code, detail and field errors', async () => {
  const err = await client.request('things.get', { id: 'x' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ServiceError);
  expect(err).toMatchObject({
    code: 'not_found',
    detail: 'thing x not found',
    errors: [{ path: 'id', message: 'unknown', in: 'path' }],
  });
});

it('hides unexpected errors behind internal_error', async () => {
  const err = (await client.request('things.crash', {}).catch((e: unknown) => e)) as ServiceError;
  expect(err.code).toBe('internal_error');
  expect(err.detail).not.toContain('secret');
});

it('maps a subject nobody serves to service_unavailable', async () => {
  const err = (await client.request('nobody.home', {}).catch((e: unknown) => e)) as ServiceError;
  expect(err).toBeInstanceOf(ServiceError);
  expect(err.code).toBe('service_unavailable');
});

it('moves payloads above the threshold by claim check, both ways', async () => {
  const text = 'x'.repeat(50_000);
  const reply = await client.request('echo', { text });
  expect(reply.length).toBe(50_000);
  expect(reply.text).toBe(text);
});

it('moves a payload above the server max_payload (1 MB) by claim check', async () => {
  const big = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'big',
    logger,
    claimRouting: claims.routing,
  });
  try {
    const text = 'é'.repeat(700_000); // 1.4 MB in UTF-8
    const reply = await big.request('echo', { text });
    expect(reply.length).toBe(700_000);
  } finally {
    await big.close();
  }
});

it('close() waits for a request in flight to be answered', async () => {
  const slow = await connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'slow', logger });
  slow.serve(
    'slow.op',
    async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { done: true };
    },
    { queue: 'slow' },
  );
  await new Promise((r) => setTimeout(r, 50));
  const pending = client.request('slow.op', {});
  await new Promise((r) => setTimeout(r, 50));
  await slow.close();
  await expect(pending).resolves.toEqual({ done: true });
});
