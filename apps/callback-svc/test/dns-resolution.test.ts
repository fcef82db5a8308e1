import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '@payments/config';
import { blockThreadPool, startNameserver, type TestNameserver } from '@payments/host-resolver/testing';
import type { AttemptOutcome } from '../src/domain/http-delivery';
import { createHttpDelivery } from '../src/transport/undici-http-delivery';
import { loadCallbackConfig } from '../src/config';

// Receivers' names: resolved off libuv's thread pool, so names whose nameserver never answers
// neither take more than 2 s each nor delay any other delivery.

let receiver: Server;
let port = 0;
const arrived: string[] = [];
beforeAll(async () => {
  receiver = createServer((req, res) => {
    arrived.push(`${req.headers.host}${req.url}`);
    res.end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

const nameservers: TestNameserver[] = [];
afterEach(async () => {
  await Promise.all(nameservers.splice(0).map((n) => n.close()));
});

async function nameserver(zone?: Parameters<typeof startNameserver>[0]): Promise<TestNameserver> {
  const started = await startNameserver(zone);
  nameservers.push(started);
  return started;
}

/** The attempt and how long it took, or a failure once it has taken `capMs`. */
async function timedPost(
  post: Promise<AttemptOutcome>,
  capMs: number,
): Promise<{ ms: number; outcome: AttemptOutcome | 'still waiting' }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<'still waiting'>((r) => (timer = setTimeout(() => r('still waiting'), capMs)));
  const outcome = await Promise.race([post, cap]);
  clearTimeout(timer);
  return { ms: performance.now() - started, outcome };
}

it('names under a silent nameserver fail at 2 s while localhost, with the thread pool held, is delivered at once', async () => {
  const silent = await nameserver();
  const delivery = createHttpDelivery({ timeoutMs: 10_000, policy: 'allow-private', dnsServers: [silent.server] });
  const pool = blockThreadPool();
  try {
    const hanging = Array.from({ length: 8 }, (_, i) =>
      timedPost(delivery.post(`http://erp${i}.silent.example.com:${port}/hook`, '{}', {}), 9_000),
    );
    await new Promise((r) => setTimeout(r, 200));

    // Every thread of libuv's pool is held, as four getaddrinfo calls against a silent nameserver
    // hold them, and eight names wait at the nameserver: a receiver named in the hosts file is not held up.
    const local = await timedPost(delivery.post(`http://localhost:${port}/local`, '{}', {}), 3_000);
    expect(local.outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(local.ms).toBeLessThan(500);
    expect(arrived).toContain(`localhost:${port}/local`);

    for (const [i, { ms, outcome }] of (await Promise.all(hanging)).entries()) {
      expect(outcome).toMatchObject({ ok: false, statusCode: null, refused: false });
      expect((outcome as AttemptOutcome).error).toBe(
        `ETIMEOUT: DNS lookup of erp${i}.silent.example.com: no answer within 2000 ms`,
      );
      // The 2 s deadline (the attempt's own is 10 s), with room for a loaded machine.
      expect(ms).toBeGreaterThanOrEqual(1_900);
      expect(ms).toBeLessThan(4_000);
    }
    expect(new Set(silent.queries.map((q) => q.name)).size).toBe(8);
    expect(arrived.filter((a) => a.includes('silent'))).toEqual([]);
  } finally {
    await pool.release();
    await delivery.close();
  }
});

it('the hosts file wins over the nameservers; other names are asked of DNS_SERVERS', async () => {
  const ns = await nameserver({
    localhost: { addresses: ['192.0.2.1'], ttl: 60 },
    'receiver.example.test': { addresses: ['127.0.0.1'], ttl: 60 },
  });
  const delivery = createHttpDelivery({ timeoutMs: 3_000, policy: 'allow-private', dnsServers: [ns.server] });
  try {
    const local = await delivery.post(`http://localhost:${port}/from-hosts-file`, '{}', {});
    const named = await delivery.post(`http://receiver.example.test:${port}/from-dns`, '{}', {});
    expect(local).toMatchObject({ ok: true, statusCode: 200 });
    expect(named).toMatchObject({ ok: true, statusCode: 200 });
    expect(arrived).toEqual(
      expect.arrayContaining([`localhost:${port}/from-hosts-file`, `receiver.example.test:${port}/from-dns`]),
    );
    expect(ns.queries.map((q) => q.name)).not.toContain('localhost');
    expect(
      ns.queries
        .filter((q) => q.name === 'receiver.example.test')
        .map((q) => q.type)
        .sort(),
    ).toEqual(['A', 'AAAA']);
  } finally {
    await delivery.close();
  }
});

it('DNS_SERVERS: a list of nameserver addresses, the system’s when unset, refused at start when malformed', () => {
  expect(loadCallbackConfig({ NODE_ENV: 'test' }).dnsServers).toEqual([]);
  expect(loadCallbackConfig({ NODE_ENV: 'test', DNS_SERVERS: '127.0.0.1:5353,[::1]:53' }).dnsServers).toEqual([
    '127.0.0.1:5353',
    '[::1]:53',
  ]);
  expect(() => loadCallbackConfig({ NODE_ENV: 'test', DNS_SERVERS: 'dns.example.com' })).toThrow(
    new ConfigError(
      'DNS_SERVERS: "dns.example.com" is not a nameserver address (1.2.3.4, 1.2.3.4:5353, 2001:db8::1 or [2001:db8::1]:5353)',
    ),
  );
});
