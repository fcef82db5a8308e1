import { Events, type NatsConnection } from 'nats';
import { createLogger } from '@payments/logger';
import { PrivateNats } from '@payments/test-support/private-nats';
import { connectBus, type Bus } from '../src';
import { NATS_MAX_PINGS_OUT, NATS_PING_INTERVAL_MS } from '../src/connection';

/**
 * A NATS server whose machine vanishes closes no socket: only the connection's pings can tell.
 * SIGSTOP stands for that machine (the process is there, nothing answers); a bus connection must drop
 * it within seconds (NATS_PING_INTERVAL_MS, NATS_MAX_PINGS_OUT), not after nats.js's default 2 minutes.
 */

const logger = createLogger('vanished-server-test', 'silent');
/**
 * nats.js drops the server at the first ping timer that finds NATS_MAX_PINGS_OUT pings unanswered:
 * that many intervals after the freeze at least, one more at most, plus how late a loaded machine
 * fires the timers (10 s here; CI runs every project's tests at once on 2 cores). nats.js's default
 * (2 minutes between pings) would take four times as long.
 */
const DROPPED_AFTER_MS = NATS_MAX_PINGS_OUT * NATS_PING_INTERVAL_MS;
const NOTICED_WITHIN_MS = (NATS_MAX_PINGS_OUT + 1) * NATS_PING_INTERVAL_MS + 10_000;

let nats: PrivateNats | undefined;
let bus: Bus | undefined;

afterEach(async () => {
  nats?.thaw();
  await bus?.connection.close().catch(() => undefined);
  await nats?.destroy();
  nats = undefined;
  bus = undefined;
});

/** Resolves with the ms from now to the connection's first disconnect, or undefined after `withinMs`. */
async function disconnectAfter(nc: NatsConnection, withinMs: number): Promise<number | undefined> {
  const from = Date.now();
  const statuses = nc.status();
  const disconnected = (async () => {
    for await (const status of statuses) if (status.type === Events.Disconnect) return Date.now() - from;
    return undefined;
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), withinMs)));
  try {
    return await Promise.race([disconnected, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

it('drops a frozen server within 40 s, by its missed pings', async () => {
  nats = await PrivateNats.create();
  bus = await connectBus({ url: nats.url, prefix: 'vanished', name: 'vanished-server-test', logger });
  await bus.connection.flush();
  const noticed = disconnectAfter(bus.connection, NOTICED_WITHIN_MS);
  nats.freeze();
  const afterMs = await noticed;
  expect(afterMs).toBeDefined();
  // Not at once: the socket stayed open, and the missed pings alone found the server gone.
  expect(afterMs).toBeGreaterThanOrEqual(DROPPED_AFTER_MS);
  expect(afterMs).toBeLessThan(NOTICED_WITHIN_MS);
}, 60_000);
