import { createServer } from 'node:http';
import { SlowReceivers } from '@payments/test-support/slow-receivers';
import type { AddressInfo } from 'node:net';
import { CallbackPublisher } from '../support/publish';
import { waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// docs/architecture.md, Callbacks: delivery is shared by tenant first. Tenant A's callbacks go to slow
// receivers on 8 loopback addresses, each answering only after ANSWER_AFTER_MS; they could take every
// slot (8 hosts x CALLBACK_HOST_CONCURRENCY 32 = CALLBACK_CONCURRENCY 256). Tenant B's callbacks, sent
// while A's hang, still arrive at once, and A never has more than its share (a quarter: 64) of the
// slots open at its receivers, counted there. The hold is small here (CALLBACK_MAX_HELD 400, a
// tenant's share 100), so that A's backlog waits in the queue, older than anything of B's: B's
// retries, claimed from the queue, still go out at once.

const SLOW_HOSTS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const ANSWER_AFTER_MS = 8_000;
const A_CALLBACKS = 8 * 40;
const B_CALLBACKS = 30;
const A_SHARE = 256 / 4;
const MAX_HELD = 400;
const RETRY_AFTER_MS = 1_000;

/**
 * Answers at once and notes when each event (webhook-id) was first delivered. With `failFirst`, an
 * event's first request is answered 503 and only its retry delivers it.
 */
class FastReceiver {
  private readonly server = createServer((req, res) => {
    req.resume();
    const id = String(req.headers['webhook-id']);
    const seen = this.requests.get(id) ?? 0;
    this.requests.set(id, seen + 1);
    if (this.failFirst && seen === 0) return void res.writeHead(503).end();
    if (!this.arrivals.has(id)) this.arrivals.set(id, Date.now());
    res.writeHead(200).end('{}');
  });
  private readonly requests = new Map<string, number>();
  readonly arrivals = new Map<string, number>();
  url = '';

  constructor(private readonly failFirst = false) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callbacks`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The 99th percentile of the waits from sending to arriving, ms. */
function p99Of(sentAt: Map<string, number>, arrivals: Map<string, number>): number {
  const waits = [...sentAt].map(([id, at]) => (arrivals.get(id) ?? Infinity) - at).sort((x, y) => x - y);
  return waits[Math.ceil(0.99 * waits.length) - 1];
}

let system: TestSystem;
let publisher: CallbackPublisher;
let tenantA: TestTenant;
let tenantB: TestTenant;
const slow = new SlowReceivers(SLOW_HOSTS, ANSWER_AFTER_MS);
const fast = new FastReceiver();
const failingOnce = new FastReceiver(true);

beforeAll(async () => {
  await Promise.all([slow.start(), fast.start(), failingOnce.start()]);
  system = await startSystem({
    withCallbacks: true,
    // The defaults, spelled out: the test is about these figures.
    env: {
      CALLBACK_CONCURRENCY: '256',
      CALLBACK_HOST_CONCURRENCY: '32',
      CALLBACK_TENANT_SHARE_PERCENT: '25',
      CALLBACK_TIMEOUT_MS: '10000',
      CALLBACK_MAX_HELD: String(MAX_HELD),
      CALLBACK_RETRY_SCHEDULE_MS: String(RETRY_AFTER_MS),
      CALLBACK_RETRY_JITTER_PERCENT: '0',
    },
  });
  publisher = await CallbackPublisher.connect(system.busPrefix);
  [tenantA, tenantB] = await Promise.all([system.newTenant('Slow receivers'), system.newTenant('Fast receiver')]);
});
afterAll(async () => {
  // The receivers first: A's attempts in flight then end at once, and callback-svc stops without waiting.
  await slow.stop();
  await fast.stop();
  await failingOnce.stop();
  await publisher?.close();
  await system?.stop();
});

it("keeps another tenant's callbacks flowing while one tenant's hang on 8 slow hosts", async () => {
  const a = Array.from({ length: A_CALLBACKS }, (_, i) =>
    publisher.request(tenantA.tenantId, slow.urls[i % slow.urls.length]),
  );
  await publisher.publishBatch(a);
  // A's callbacks have taken all the slots they may: its share, not all 256.
  await waitFor(async () => slow.openNow >= A_SHARE, 20_000, `A's share of slots open at its receivers`);

  const sentAt = new Map<string, number>();
  for (let i = 0; i < B_CALLBACKS; i++) {
    const request = publisher.request(tenantB.tenantId, fast.url);
    sentAt.set(request.event_id, Date.now());
    await publisher.publish(request);
    await new Promise((r) => setTimeout(r, 100));
  }
  await waitFor(async () => fast.arrivals.size >= B_CALLBACKS, 15_000, "B's callbacks delivered");
  const p99 = p99Of(sentAt, fast.arrivals);
  // B's all arrived while A's hung: none of A's receivers had answered yet.
  expect(Math.max(...fast.arrivals.values())).toBeLessThan(slow.firstAt + ANSWER_AFTER_MS);
  expect(p99).toBeLessThan(2_500);
  expect(slow.maxOpen).toBe(A_SHARE);
});

it("claims another tenant's retries from the queue while one tenant's older backlog waits there", async () => {
  const [a, b] = await Promise.all([system.newTenant('Slow backlog'), system.newTenant('Retried')]);
  // Far more than A may hold (a quarter of MAX_HELD): most of it waits in the queue, due, and older
  // than B's retries; it alone could fill every claim.
  const backlog = Array.from({ length: 4 * MAX_HELD }, (_, i) => publisher.request(a.tenantId, slow.urls[i % 8]));
  const startedAt = Date.now();
  await publisher.publishBatch(backlog);
  const sentAt = new Map<string, number>();
  for (let i = 0; i < B_CALLBACKS; i++) {
    const request = publisher.request(b.tenantId, failingOnce.url);
    sentAt.set(request.event_id, Date.now());
    await publisher.publish(request);
    await new Promise((r) => setTimeout(r, 50));
  }
  await waitFor(async () => failingOnce.arrivals.size >= B_CALLBACKS, 20_000, "B's retries delivered");
  // A retry is due RETRY_AFTER_MS after the first attempt; then a claim (every 500 ms at most) and the POST.
  expect(p99Of(sentAt, failingOnce.arrivals)).toBeLessThan(RETRY_AFTER_MS + 2_000);
  // All before A's first answers: none waited for A's events to leave room.
  expect(Math.max(...failingOnce.arrivals.values())).toBeLessThan(startedAt + ANSWER_AFTER_MS);
});
