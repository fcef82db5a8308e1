import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallbackEventView } from '@payments/contracts';
import { CallbackPublisher } from '../support/publish';
import { waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// docs/architecture.md: one deadline of 10 s (CALLBACK_TIMEOUT_MS, left at its default here) per attempt, from
// connecting until the answer is complete or its first KiB is in. Receivers that trickle or answer late
// fail at the deadline and are retried; a huge answer is a delivery after its first KiB. Attempts are
// read back through the API as an ERP would.

const DEADLINE_MS = 10_000;

/** A receiver whose first answer is hostile and whose later ones are a plain 200. */
class HostileReceiver {
  private server!: Server;
  url = '';
  requests = 0;
  /** Bytes of its hostile answer written before the sender went away. */
  written = 0;
  private readonly open = new Set<ServerResponse>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly first: (res: ServerResponse, self: HostileReceiver) => void) {}

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      req.resume();
      req.on('end', () => {
        this.requests += 1;
        if (this.requests === 1) this.first(res, this);
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callbacks`;
    return this;
  }

  every(ms: number, tick: () => void): void {
    const timer = setInterval(tick, ms);
    this.timers.add(timer);
  }

  after(ms: number, then: () => void): void {
    const timer = setTimeout(then, ms);
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** 200 at once, then a byte every 2 s: every gap is short, the answer never completes. */
const trickling = (res: ServerResponse, self: HostileReceiver) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  self.every(2_000, () => {
    if (res.destroyed) return;
    res.write('.');
    self.written += 1;
  });
};

/** A complete 200, 11 s after the request. */
const late = (res: ServerResponse, self: HostileReceiver) =>
  self.after(11_000, () => {
    if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });

const HUGE_BYTES = 256 * 2 ** 20;

/** 200 and 256 MiB, written as fast as the sender reads. */
const huge = (res: ServerResponse, self: HostileReceiver) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(HUGE_BYTES) });
  const chunk = Buffer.alloc(64 * 1024, 'y');
  const pump = () => {
    while (self.written < HUGE_BYTES && !res.destroyed) {
      self.written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
};

let system: TestSystem;
let publisher: CallbackPublisher;
let tenant: TestTenant;
const receivers: HostileReceiver[] = [];

beforeAll(async () => {
  system = await startSystem({
    withCallbacks: true,
    env: { CALLBACK_RETRY_SCHEDULE_MS: '1000,1000,1000', CALLBACK_RETRY_JITTER_PERCENT: '0' },
  });
  publisher = await CallbackPublisher.connect(system.busPrefix);
  tenant = await system.newTenant('Hostile receivers');
});
afterAll(async () => {
  await Promise.allSettled(receivers.map((r) => r.stop()));
  await publisher?.close();
  await system?.stop();
});

async function view(eventId: string): Promise<CallbackEventView | undefined> {
  const res = await tenant.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${eventId}`);
  return res.status === 200 ? res.json : undefined;
}

/** Sends one callback to a receiver behaving as `first` on its first request; resolves when it is delivered. */
async function deliverTo(first: (res: ServerResponse, self: HostileReceiver) => void) {
  const receiver = await new HostileReceiver(first).start();
  receivers.push(receiver);
  const request = publisher.request(tenant.tenantId, receiver.url);
  const sentAt = Date.now();
  await publisher.publish(request);
  await waitFor(async () => (await view(request.event_id))?.status === 'delivered', 30_000, 'delivered');
  const deliveredAfterMs = Date.now() - sentAt;
  // Later attempts, if any were wrongly scheduled or recorded, would show up meanwhile.
  await new Promise((r) => setTimeout(r, 2_500));
  return { receiver, event: (await view(request.event_id))!, deliveredAfterMs };
}

const deliveries = (event: CallbackEventView) =>
  event.attempts.filter((a) => a.status_code !== null && a.status_code < 300 && a.error === null);

it.concurrent('a receiver that answers 200 and trickles its body fails at the deadline, and is retried', async () => {
  const { receiver, event } = await deliverTo(trickling);
  expect(event.status).toBe('delivered');
  expect(event.attempts).toHaveLength(2);
  const [failed, delivered] = event.attempts;
  expect(failed.status_code).toBe(200);
  expect(failed.error).toBe(`HTTP 200, but the answer was not complete within ${DEADLINE_MS} ms`);
  expect(failed.duration_ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
  expect(failed.duration_ms).toBeLessThan(11_000);
  expect(receiver.written).toBeGreaterThanOrEqual(3); // it did trickle, a byte every 2 s
  expect(delivered).toMatchObject({ status_code: 200, error: null });
  expect(deliveries(event)).toHaveLength(1);
  expect(receiver.requests).toBe(2);
});

it.concurrent('a receiver that answers after 11 s fails at the deadline, and is retried', async () => {
  const { receiver, event } = await deliverTo(late);
  expect(event.status).toBe('delivered');
  expect(event.attempts).toHaveLength(2);
  const [failed, delivered] = event.attempts;
  expect(failed).toMatchObject({ status_code: null, error: `no answer within ${DEADLINE_MS} ms` });
  expect(failed.duration_ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
  expect(failed.duration_ms).toBeLessThan(11_000);
  expect(delivered).toMatchObject({ status_code: 200, error: null });
  expect(deliveries(event)).toHaveLength(1);
  expect(receiver.requests).toBe(2);
});

it.concurrent('a receiver answering 200 with a huge body is delivered at once, without reading it all', async () => {
  const { receiver, event, deliveredAfterMs } = await deliverTo(huge);
  expect(event.status).toBe('delivered');
  expect(event.attempts).toHaveLength(1);
  expect(event.attempts[0]).toMatchObject({ status_code: 200, error: null });
  expect(event.attempts[0].duration_ms).toBeLessThan(2_000);
  expect(deliveredAfterMs).toBeLessThan(5_000);
  // The sender dropped the connection after the first KiB: socket buffers hold a few MiB at most.
  expect(receiver.written).toBeLessThan(32 * 2 ** 20);
  expect(receiver.requests).toBe(1);
});
