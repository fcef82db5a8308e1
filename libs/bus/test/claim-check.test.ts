import { randomBytes } from 'node:crypto';
import type { Exchange } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus } from '../src';

// Large payloads travel by claim check through a JetStream object store: bounded, like every
// stream, by STREAM_MAX_BYTES (and by a TTL).

type TestRegistry = {
  requests: { 'big.echo': Exchange<{ text: string }, { length: number }> };
  streams: Record<string, never>;
};

const logger = createLogger('claim-check-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const MAX_BYTES = 2 * 1024 * 1024;
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  bus = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'claims',
    logger,
    claimCheckThreshold: 1024,
    streamSettings: { streamMaxBytes: MAX_BYTES },
  });
  bus.serve('big.echo', async ({ text }) => ({ length: text.length }), { queue: 'echo' });
  await bus.connection.flush();
});
afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  await jsm.streams.delete(`OBJ_${prefix}_claims`).catch(() => undefined);
  await bus?.close();
});

it('carries a payload over the threshold, through a store bounded by STREAM_MAX_BYTES', async () => {
  expect(await bus.request('big.echo', { text: 'x'.repeat(200_000) })).toEqual({ length: 200_000 });
  const jsm = await bus.connection.jetstreamManager();
  const info = await jsm.streams.info(`OBJ_${prefix}_claims`);
  expect(info.config.max_bytes).toBe(MAX_BYTES);
});
