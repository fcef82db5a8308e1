import type { ClaimedEvent } from '../src/domain/callback-event';
import { HeldEvents, type HoldLimits } from '../src/domain/held-events';

const limits: HoldLimits = {
  concurrency: 5,
  tenantConcurrency: 5,
  hostConcurrency: 2,
  maxHeld: 10,
  maxHeldPerTenant: 10,
  maxHeldPerHost: 6,
  minLeaseLeftMs: 1_000,
  maxWaitMs: 50_000,
};
let clock = 0;
const held = (l: HoldLimits = limits) => new HeldEvents(l, () => clock);
let n = 0;
const event = (host: string, tenantId = 't'): ClaimedEvent => ({
  eventId: `evt_${++n}`,
  tenantId,
  url: `http://${host}/cb`,
  targetHost: host,
  body: '{}',
  failuresInRun: 0,
  leaseToken: 'lease',
  traceContext: null,
});
const ids = (events: ClaimedEvent[]) => events.map((e) => e.eventId);

beforeEach(() => {
  clock = 0;
});

it('starts at most the per-host limit for a host, oldest first, and the rest when it answers', () => {
  const h = held();
  const a = [event('a'), event('a'), event('a')];
  for (const e of a) h.hold(e, 60_000);
  expect(ids(h.takeStartable().start)).toEqual(ids(a.slice(0, 2)));
  expect(h.takeStartable().start).toEqual([]);
  h.answered('a', true);
  expect(ids(h.takeStartable().start)).toEqual([a[2].eventId]);
  expect(h.heldFor('a')).toBe(2); // both in flight, none waiting
});

it('lets hosts take turns and keeps the global in-flight limit until attempts are recorded', () => {
  const h = held();
  const a = [event('a'), event('a'), event('a')];
  const b = [event('b'), event('b')];
  const c = [event('c'), event('c')];
  for (const e of [...a, ...b, ...c]) h.hold(e, 60_000);
  const first = h.takeStartable().start;
  expect(first).toHaveLength(5);
  expect(ids(first.slice(0, 3))).toEqual([a[0], b[0], c[0]].map((e) => e.eventId)); // one each, then round again
  h.answered('a', true); // a's slot is free, but no global slot until an attempt is recorded
  expect(h.takeStartable().start).toEqual([]);
  h.finished({ tenantId: 't', targetHost: 'a' });
  expect(h.takeStartable().start).toHaveLength(1);
});

it('drops an event whose lease is too short to start it', () => {
  const h = held();
  const [late, fresh] = [event('a'), event('a')];
  h.hold(late, 1_500);
  h.hold(fresh, 5_000);
  clock = 800; // late has 700 ms left, less than the 1,000 ms needed
  const { start, expired } = h.takeStartable();
  expect(ids(expired)).toEqual([late.eventId]);
  expect(ids(start)).toEqual([fresh.eventId]);
  expect(h.size).toBe(1);
});

it('gives room to claim in all and per host, less for a host whose last attempt failed', () => {
  const h = held();
  for (let i = 0; i < 4; i++) h.hold(event('a'), 60_000);
  h.hold(event('b'), 60_000);
  let room = h.claimRoom();
  expect(room.total).toBe(5);
  expect(room.left.get('a')).toBe(2);
  expect(room.left.get('b')).toBe(5);
  expect(room.perHost).toBe(6);
  expect(h.roomFor('a')).toBe(2);
  h.takeStartable();
  h.answered('a', false); // failing: at most 2 x hostConcurrency = 4 held
  room = h.claimRoom();
  expect(h.heldFor('a')).toBe(3);
  expect(room.left.get('a')).toBe(1);
  h.answered('a', true);
  expect(h.claimRoom().left.get('a')).toBe(4);
});

it('keeps the global hold limit', () => {
  const h = held();
  for (let i = 0; i < 10; i++) h.hold(event(`h${i}`), 60_000);
  expect(h.claimRoom().total).toBe(0);
  expect(h.totalRoom()).toBe(0);
  expect(h.roomFor('new')).toBe(6); // its own limit, but nothing left in all
});

it('hands every waiting event back on shutdown', () => {
  const h = held();
  const events = [event('a'), event('a'), event('a'), event('b')];
  for (const e of events) h.hold(e, 60_000);
  const started = h.takeStartable().start;
  const waiting = h.drainWaiting();
  expect(new Set(ids([...started, ...waiting]))).toEqual(new Set(ids(events)));
  expect(ids(waiting)).toEqual([events[2].eventId]);
  expect(h.size).toBe(started.length);
});

it('holds for a host what it answers within the wait an event may have, measured while it has a backlog', () => {
  const h = held({
    concurrency: 100,
    tenantConcurrency: 100,
    hostConcurrency: 2,
    maxHeld: 5_000,
    maxHeldPerTenant: 5_000,
    maxHeldPerHost: 1_000,
    minLeaseLeftMs: 1_000,
    maxWaitMs: 10_000,
  });
  for (let i = 0; i < 50; i++) h.hold(event('slow'), 600_000);
  expect(h.heldLimitFor('slow')).toBe(1_000); // not measured yet
  h.takeStartable();
  // 10 answers in 5 s with events still waiting: 2 per second, so 20 fit in a 10 s wait.
  for (let i = 1; i <= 10; i++) {
    clock = i * 500;
    h.answered('slow', true);
    h.finished({ tenantId: 't', targetHost: 'slow' });
    h.takeStartable();
  }
  expect(h.heldLimitFor('slow')).toBe(20);
  expect(h.claimRoom().left.get('slow')).toBe(0); // it holds 40 already
  expect(h.roomFor('slow')).toBe(0);
  // Never below 4 x its in-flight limit.
  for (let i = 1; i <= 2; i++) {
    clock = 5_000 + i * 2_600;
    h.answered('slow', true);
    h.finished({ tenantId: 't', targetHost: 'slow' });
    h.takeStartable();
  }
  expect(h.heldLimitFor('slow')).toBe(8);
});

it('forgets a pace measured without a backlog: few answers then say nothing of the host', () => {
  const h = held({
    concurrency: 100,
    tenantConcurrency: 100,
    hostConcurrency: 2,
    maxHeld: 5_000,
    maxHeldPerTenant: 5_000,
    maxHeldPerHost: 1_000,
    minLeaseLeftMs: 1_000,
    maxWaitMs: 10_000,
  });
  const [a, b, c] = [event('quiet'), event('quiet'), event('quiet')];
  for (const e of [a, b, c]) h.hold(e, 600_000);
  h.takeStartable();
  clock = 5_000;
  h.answered('quiet', true); // one waiting at the end of the window: measured
  expect(h.heldLimitFor('quiet')).toBe(8);
  h.finished({ tenantId: 't', targetHost: 'quiet' });
  h.takeStartable(); // c starts: nothing waits any more
  clock = 10_000;
  h.answered('quiet', true);
  expect(h.heldLimitFor('quiet')).toBe(1_000);
});

it('remembers an idle failing host for a while, then forgets it; never more than 10,000 of them', () => {
  clock = 1; // lru-cache reads a start time of 0 as no TTL
  const h = held();
  const e = event('dead.test');
  h.hold(e, 60_000);
  h.takeStartable();
  h.answered('dead.test', false);
  h.finished({ tenantId: 't', targetHost: 'dead.test' });
  // Idle, but still held to its failing limit (2 x hostConcurrency = 4).
  expect(h.claimRoom().left.get('dead.test')).toBe(4);
  expect(h.failingHostCount).toBe(1);
  clock += 9 * 60_000;
  expect(h.claimRoom().left.get('dead.test')).toBe(4);
  clock += 2 * 60_000;
  expect(h.claimRoom().left.has('dead.test')).toBe(false);
  expect(h.failingHostCount).toBe(0);

  for (let i = 0; i < 12_000; i++) {
    const host = `h${i}.test`;
    h.hold(event(host), clock + 60_000);
    h.takeStartable();
    h.answered(host, false);
    h.finished({ tenantId: 't', targetHost: host });
  }
  expect(h.failingHostCount).toBe(10_000);
  expect(h.size).toBe(0);
  // The oldest failures went first.
  expect(h.claimRoom().left.has('h0.test')).toBe(false);
  expect(h.claimRoom().left.get('h11999.test')).toBe(4);
});

describe('tenant shares', () => {
  const shared: HoldLimits = {
    concurrency: 8,
    tenantConcurrency: 2,
    hostConcurrency: 4,
    maxHeld: 100,
    maxHeldPerTenant: 30,
    maxHeldPerHost: 50,
    minLeaseLeftMs: 1_000,
    maxWaitMs: 50_000,
  };
  const hosts = Array.from({ length: 8 }, (_, i) => `slow${i}.test`);

  it("keeps a tenant's hanging deliveries, on any number of hosts, to its share, and starts another tenant's at once", () => {
    const h = held(shared);
    for (let round = 0; round < 3; round++) for (const host of hosts) h.hold(event(host, 'A'), 60_000);
    const first = h.takeStartable().start;
    // Its share, one host after another, though 6 more slots are free and nobody else waits.
    expect(first.map((e) => e.targetHost)).toEqual(['slow0.test', 'slow1.test']);
    expect(h.takeStartable().start).toEqual([]);
    const b = [event('fast.test', 'B'), event('fast.test', 'B'), event('fast.test', 'B')];
    for (const e of b) h.hold(e, 60_000);
    expect(ids(h.takeStartable().start)).toEqual(ids(b.slice(0, 2))); // A's still hang
    expect(h.runningFor('A')).toBe(2);
    // An answer frees the host, not the tenant's slot: that waits for the attempt to be recorded.
    h.answered('slow0.test', false);
    expect(h.takeStartable().start).toEqual([]);
    h.finished(first[0]);
    expect(h.takeStartable().start.map((e) => e.targetHost)).toEqual(['slow2.test']); // the next host's turn
    expect(h.runningFor('A')).toBe(2);
  });

  it('gives the free slots to tenants in turn, one each per round', () => {
    const h = held({ ...shared, concurrency: 5, tenantConcurrency: 5 });
    for (const tenant of ['A', 'B', 'C']) for (let i = 0; i < 4; i++) h.hold(event(`${tenant}.test`, tenant), 60_000);
    const started = h.takeStartable().start;
    expect(started.map((e) => e.tenantId)).toEqual(['A', 'B', 'C', 'A', 'B']);
    h.answered('A.test', true);
    h.finished(started[0]);
    // C had fewer turns: the slot freed by A goes to C.
    expect(h.takeStartable().start.map((e) => e.tenantId)).toEqual(['C']);
  });

  it('keeps the host limit across the tenants sending to it', () => {
    const h = held({ ...shared, tenantConcurrency: 8 });
    for (let i = 0; i < 6; i++) h.hold(event('shared.test', 'A'), 60_000);
    for (let i = 0; i < 6; i++) h.hold(event('shared.test', 'B'), 60_000);
    expect(h.takeStartable().start.map((e) => e.tenantId)).toEqual(['A', 'B', 'A', 'B']);
    expect(h.heldFor('shared.test')).toBe(12);
  });

  it('holds for a tenant what its share gets through within the wait an event may have', () => {
    const h = held({ ...shared, maxHeldPerTenant: 1_000, maxHeldPerHost: 1_000, maxHeld: 5_000, maxWaitMs: 10_000 });
    for (let i = 0; i < 200; i++) h.hold(event(hosts[i % 8], 'A'), 600_000);
    expect(h.heldLimitForTenant('A')).toBe(1_000); // not measured yet
    let running = h.takeStartable().start;
    // 15 attempts finished in 5 s with events still waiting: 3 per second, so 30 fit in a 10 s wait.
    for (let i = 1; i <= 15; i++) {
      clock = Math.round((i * 1000) / 3);
      const [done, ...rest] = running;
      h.answered(done.targetHost, true);
      h.finished(done);
      running = [...rest, ...h.takeStartable().start];
    }
    expect(h.heldLimitForTenant('A')).toBe(30);
    expect(h.roomForTenant('A')).toBe(0); // it holds 185
    expect(h.claimRoom().tenantLeft.get('A')).toBe(0);
    // Never below 4 x its share of the slots (2).
    clock = 20_000;
    const [done] = running;
    h.answered(done.targetHost, true);
    h.finished(done);
    expect(h.heldLimitForTenant('A')).toBe(8);
    expect(h.heldLimitForTenant('B')).toBe(1_000);
  });

  it("gives room to claim per tenant: one tenant's backlog leaves the rest of the hold to the others", () => {
    const h = held(shared);
    for (let i = 0; i < 30; i++) h.hold(event(hosts[i % 8], 'A'), 60_000);
    h.hold(event('fast.test', 'B'), 60_000);
    const room = h.claimRoom();
    expect(room.tenantLeft.get('A')).toBe(0);
    expect(room.tenantLeft.get('B')).toBe(29);
    expect(room.perTenant).toBe(30);
    expect(room.total).toBe(69);
    expect(h.roomForTenant('C')).toBe(30);
    // Started and finished, A's events leave its room again, and an idle tenant is forgotten.
    for (const e of h.takeStartable().start) {
      h.answered(e.targetHost, true);
      h.finished(e);
    }
    expect(h.roomForTenant('A')).toBe(2);
    const rest = h.drainWaiting();
    expect(rest).toHaveLength(28);
    expect(h.size).toBe(0);
    expect(h.claimRoom().tenantLeft.size).toBe(0);
    expect(h.claimRoom().left.size).toBe(0);
  });
});
