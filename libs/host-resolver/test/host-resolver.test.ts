import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHostResolver, HostLookupError, type HostResolver, type HostResolverOptions } from '../src';
import { blockThreadPool, startNameserver, type TestNameserver } from '../src/testing';

let dir: string;
let hostsFile: string;
const resolvers: HostResolver[] = [];
const nameservers: TestNameserver[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'host-resolver-'));
  hostsFile = join(dir, 'hosts');
  writeFileSync(
    hostsFile,
    [
      '# a comment line',
      '127.0.0.1   localhost',
      '::1         localhost ip6-localhost',
      '10.1.2.3    erp.example.test   Alias.Example.Test # trailing comment',
      '172.17.0.1  host.docker.internal',
      'not-an-address ignored.example.test',
    ].join('\n'),
  );
});

afterEach(async () => {
  for (const r of resolvers.splice(0)) r.close();
  await Promise.all(nameservers.splice(0).map((n) => n.close()));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function nameserver(zone?: Parameters<typeof startNameserver>[0]): Promise<TestNameserver> {
  const started = await startNameserver(zone);
  nameservers.push(started);
  return started;
}

function resolverFor(ns: TestNameserver, options: HostResolverOptions = {}): HostResolver {
  const resolver = createHostResolver({ servers: [ns.server], hostsFile, ...options });
  resolvers.push(resolver);
  return resolver;
}

/** The resolver's lookup as a promise, with what dns.lookup's callback would receive. */
function lookup(
  resolver: HostResolver,
  host: string,
  options: LookupOptions = {},
): Promise<{ address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve, reject) =>
    resolver.lookup(host, options, (err, address, family) => (err ? reject(err) : resolve({ address, family }))),
  );
}

/** How long `work` took to settle and how; one still out after `capMs` is a rejection then. */
async function timed<T>(work: Promise<T>, capMs = 10_000): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${capMs} ms`)), capMs);
  });
  const [result] = await Promise.allSettled([Promise.race([work, cap])]);
  clearTimeout(timer);
  return { ms: performance.now() - started, result };
}

describe('the hosts file', () => {
  it('answers the names it lists, without a query, and wins over the nameservers', async () => {
    const ns = await nameserver({ 'erp.example.test': { addresses: ['192.0.2.7'], ttl: 60 } });
    const resolver = resolverFor(ns);
    expect(await resolver.resolve('erp.example.test')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolver.resolve('ALIAS.example.test.')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolver.resolve('host.docker.internal')).toEqual([{ address: '172.17.0.1', family: 4 }]);
    expect(await lookup(resolver, 'localhost', { all: true })).toEqual({
      address: [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    expect(await lookup(resolver, 'localhost', { family: 6 })).toEqual({ address: '::1', family: 6 });
    expect(ns.queries).toEqual([]);
  });

  it('is read again once it is older than its refresh period', async () => {
    const ns = await nameserver({});
    const own = join(dir, 'hosts-changing');
    writeFileSync(own, '10.0.0.1 moving.example.test\n');
    const resolver = resolverFor(ns, { hostsFile: own, hostsFileRefreshMs: 300 });
    expect(await resolver.resolve('moving.example.test')).toEqual([{ address: '10.0.0.1', family: 4 }]);
    writeFileSync(own, '10.0.0.2 moving.example.test\n');
    await new Promise((r) => setTimeout(r, 400));
    expect(await resolver.resolve('moving.example.test')).toEqual([{ address: '10.0.0.2', family: 4 }]);
  });
});

describe('the nameservers', () => {
  it('answer A and AAAA; lookup honours all and family as dns.lookup does', async () => {
    const ns = await nameserver({ 'erp.example.com': { addresses: ['192.0.2.10', '2001:db8::10'], ttl: 60 } });
    const resolver = resolverFor(ns);
    expect(await lookup(resolver, 'erp.example.com', { all: true })).toEqual({
      address: [
        { address: '192.0.2.10', family: 4 },
        { address: '2001:db8::10', family: 6 },
      ],
    });
    expect(await lookup(resolver, 'erp.example.com')).toEqual({ address: '192.0.2.10', family: 4 });
    expect(await lookup(resolver, 'erp.example.com', { family: 6 })).toEqual({ address: '2001:db8::10', family: 6 });
    expect(await lookup(resolver, 'erp.example.com', { family: 4, all: true })).toEqual({
      address: [{ address: '192.0.2.10', family: 4 }],
    });
    expect(await lookup(resolver, '192.0.2.99')).toEqual({ address: '192.0.2.99', family: 4 });
  });

  it('an unknown name fails with ENOTFOUND; a missing family too', async () => {
    const ns = await nameserver({ 'v4only.example.com': { addresses: ['192.0.2.4'], ttl: 60 } });
    const resolver = resolverFor(ns);
    await expect(lookup(resolver, 'nowhere.example.com')).rejects.toMatchObject({
      code: 'ENOTFOUND',
      hostname: 'nowhere.example.com',
    });
    await expect(lookup(resolver, 'v4only.example.com', { family: 6 })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('an answer is served from memory for its TTL, capped, without a new query', async () => {
    const ns = await nameserver({
      'short.example.com': { addresses: ['192.0.2.1'], ttl: 1 },
      'long.example.com': { addresses: ['192.0.2.2'], ttl: 86_400 },
    });
    const resolver = resolverFor(ns, { maxAnswerTtlMs: 1_500 });
    const asked = (name: string) => ns.queries.filter((q) => q.name === name).length;

    await resolver.resolve('short.example.com');
    await resolver.resolve('long.example.com');
    expect([asked('short.example.com'), asked('long.example.com')]).toEqual([2, 2]); // A and AAAA
    for (let i = 0; i < 5; i++) await resolver.resolve('short.example.com');
    await resolver.resolve('long.example.com');
    expect([asked('short.example.com'), asked('long.example.com')]).toEqual([2, 2]);

    await new Promise((r) => setTimeout(r, 1_100)); // past the 1 s TTL, within the 1.5 s cap
    await resolver.resolve('short.example.com');
    await resolver.resolve('long.example.com');
    expect([asked('short.example.com'), asked('long.example.com')]).toEqual([4, 2]);

    await new Promise((r) => setTimeout(r, 500)); // past the cap of the day-long TTL
    await resolver.resolve('long.example.com');
    expect(asked('long.example.com')).toBe(4);
  });

  it('concurrent lookups of one name share one query; a failure is remembered briefly', async () => {
    const ns = await nameserver({ 'erp.example.com': { addresses: ['192.0.2.10'], ttl: 60 } });
    const resolver = resolverFor(ns, { failureTtlMs: 1_000 });
    const many = await Promise.all(Array.from({ length: 20 }, () => resolver.resolve('erp.example.com')));
    expect(new Set(many.map((m) => m[0].address))).toEqual(new Set(['192.0.2.10']));
    expect(ns.queries.length).toBe(2);

    await expect(resolver.resolve('gone.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolve('gone.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(ns.queries.filter((q) => q.name === 'gone.example.com').length).toBe(2);
    await new Promise((r) => setTimeout(r, 1_100));
    await expect(resolver.resolve('gone.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(ns.queries.filter((q) => q.name === 'gone.example.com').length).toBe(4);
  });
});

describe('a nameserver that never answers', () => {
  it('is passed over for the next one within the deadline', async () => {
    const silent = await nameserver();
    const answering = await nameserver({ 'erp.example.com': { addresses: ['192.0.2.10'], ttl: 60 } });
    const resolver = createHostResolver({ servers: [silent.server, answering.server], hostsFile });
    resolvers.push(resolver);
    const { ms, result } = await timed(resolver.resolve('erp.example.com'));
    expect(result).toEqual({ status: 'fulfilled', value: [{ address: '192.0.2.10', family: 4 }] });
    expect(ms).toBeLessThan(1_900);
  });

  it('fails each name at the 2 s deadline with a clear error, while localhost resolves at once', async () => {
    const silent = await nameserver();
    const resolver = resolverFor(silent);
    const hanging = Array.from({ length: 8 }, (_, i) => timed(resolver.resolve(`erp${i}.silent.example.com`)));
    await new Promise((r) => setTimeout(r, 100));
    const local = await timed(lookup(resolver, 'localhost'));
    const docker = await timed(resolver.resolve('host.docker.internal'));
    const settled = await Promise.all(hanging);

    expect(local.result).toEqual({ status: 'fulfilled', value: { address: '127.0.0.1', family: 4 } });
    expect(local.ms).toBeLessThan(50);
    expect(docker.ms).toBeLessThan(50);
    for (const [i, { ms, result }] of settled.entries()) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason as HostLookupError;
      expect(error).toBeInstanceOf(HostLookupError);
      expect(error).toMatchObject({ code: 'ETIMEOUT', hostname: `erp${i}.silent.example.com` });
      expect(error.message).toBe(`DNS lookup of erp${i}.silent.example.com: no answer within 2000 ms`);
      // 2 s, with room for a loaded machine (the test's own timer runs on the same loop).
      expect(ms).toBeGreaterThanOrEqual(1_950);
      expect(ms).toBeLessThan(3_000);
    }
    // Each name was asked (A and AAAA): the silence was the nameserver's, not a query never sent.
    expect(new Set(silent.queries.map((q) => q.name)).size).toBe(8);
  });

  it('a name that timed out answers from memory (at once) until its failure expires', async () => {
    const silent = await nameserver();
    const resolver = resolverFor(silent, { deadlineMs: 300, failureTtlMs: 60_000 });
    await expect(resolver.resolve('erp.silent.example.com')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    const again = await timed(resolver.resolve('erp.silent.example.com'));
    expect(again.result.status).toBe('rejected');
    expect(again.ms).toBeLessThan(50);
  });
});

describe('off the thread pool', () => {
  it('resolves while every thread of the pool is taken; dns.lookup waits for one', async () => {
    const ns = await nameserver({ 'erp.example.com': { addresses: ['192.0.2.10'], ttl: 60 } });
    const resolver = resolverFor(ns);
    const pool = blockThreadPool();
    try {
      await new Promise((r) => setTimeout(r, 100));
      // The control: getaddrinfo, even of localhost, has no thread to run on.
      let systemDone = false;
      const system = new Promise<void>((resolve) =>
        dnsLookup('localhost', () => {
          systemDone = true;
          resolve();
        }),
      );
      const local = await timed(lookup(resolver, 'localhost'), 1_000);
      const remote = await timed(resolver.resolve('erp.example.com'), 1_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(systemDone).toBe(false);

      expect(local.result.status).toBe('fulfilled');
      expect(local.ms).toBeLessThan(50);
      expect(remote.result).toEqual({ status: 'fulfilled', value: [{ address: '192.0.2.10', family: 4 }] });
      expect(remote.ms).toBeLessThan(500);
      await pool.release();
      await system;
    } finally {
      await pool.release().catch(() => undefined);
    }
  });
});
