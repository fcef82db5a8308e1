import { createLogger } from '@payments/logger';
import { BusUnavailableError, checkBus, connectBus, natsServers } from '../src';
import { freePort as closedPort } from './support/nats-servers';

// NATS_URL may list a cluster's servers: the service starts when any one of them is up.

const logger = createLogger('servers-test', 'silent');
const realNats = 'nats://127.0.0.1:4222';

it('splits NATS_URL on commas, trimming spaces and dropping empty entries', () => {
  expect(natsServers(' nats://a:4222, nats://b:4222 ,,nats://c:4222,')).toEqual([
    'nats://a:4222',
    'nats://b:4222',
    'nats://c:4222',
  ]);
  expect(natsServers('nats://127.0.0.1:4222')).toEqual(['nats://127.0.0.1:4222']);
});

// Given the string as it is, nats.js took only the last server: the real one first and a closed one
// last failed to start, though the real one was up. nats.js shuffles the list, so each case runs a
// few times to try both servers first.
it.each([
  ['the first server listed is down', (down: string) => `${down}, ${realNats}`],
  ['the last server listed is down', (down: string) => `${realNats} ,${down}`],
])('connects when %s and another is up', async (_, list) => {
  const url = list(`nats://127.0.0.1:${await closedPort()}`);
  for (let attempt = 0; attempt < 6; attempt++) {
    const bus = await connectBus({ url, prefix: 'tservers', name: 'servers-test', logger });
    try {
      expect(bus.connection.getServer()).toBe('127.0.0.1:4222');
      await expect(bus.connection.jetstreamManager()).resolves.toBeDefined();
    } finally {
      await bus.close();
    }
    await expect(checkBus(url)).resolves.toBeUndefined();
  }
});

it('fails at start-up with one line naming NATS_URL and every server tried when none is up', async () => {
  const [a, b] = [await closedPort(), await closedPort()];
  const url = `nats://127.0.0.1:${a},nats://127.0.0.1:${b}`;
  const failure = await connectBus({ url, prefix: 'tservers', name: 'servers-test', logger }).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(BusUnavailableError);
  expect(failure).toMatchObject({
    problem: 'unreachable',
    message: `cannot reach NATS at nats://127.0.0.1:${a},nats://127.0.0.1:${b} (connection refused): start nats-server -js or set NATS_URL`,
  });
});
