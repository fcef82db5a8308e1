import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import type { CallbackEventSummary, CallbackEventView, CallbackRetryResponse, Problem } from '@payments/contracts';
import type { ApiResponse } from '../support/api-client';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { CallbackPublisher } from '../support/publish';
import { loginCheckingNats, productionEnv, type LoginCheckingNats } from '../support/production-env';

// A shortened schedule: 3 retries after 150, 150, 150 ms; attempts time out after 400 ms.
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '150,150,150',
  CALLBACK_RETRY_JITTER_PERCENT: '0',
  CALLBACK_TIMEOUT_MS: '400',
  CALLBACK_POLL_INTERVAL_MS: '50',
  CALLBACK_HOST_CONCURRENCY: '4',
};

let system: TestSystem;
let publisher: CallbackPublisher;
let tenant: TestTenant;
const receivers: CallbackReceiver[] = [];

async function receiver(behaviour?: ConstructorParameters<typeof CallbackReceiver>[0]): Promise<CallbackReceiver> {
  const r = await new CallbackReceiver(behaviour).start();
  receivers.push(r);
  return r;
}

async function eventView(t: TestTenant, eventId: string): Promise<CallbackEventView> {
  const res = await t.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${eventId}`);
  expect(res.status).toBe(200);
  return res.json;
}

/** Whether the event is stored and has reached `status` (a freshly published event may not be stored yet: 404). */
async function eventReached(t: TestTenant, eventId: string, status: CallbackEventView['status']): Promise<boolean> {
  const res = await t.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${eventId}`);
  if (res.status === 404) return false;
  expect(res.status).toBe(200);
  return res.json.status === status;
}

beforeAll(async () => {
  system = await startSystem({ withCallbacks: true, env: FAST });
  publisher = await CallbackPublisher.connect(system.busPrefix);
  tenant = await system.newTenant('Callbacks');
});
afterAll(async () => {
  await Promise.allSettled(receivers.map((r) => r.stop()));
  await publisher?.close();
  await system?.stop();
});

it('delivers a signed POST that the standardwebhooks package verifies with the tenant secret', async () => {
  const r = await receiver();
  const request = publisher.request(tenant.tenantId, r.url);
  await publisher.publish(request);
  await waitFor(() => r.delivered().length === 1, 10_000, 'delivery');
  const got = r.received[0];
  expect(got.headers['content-type']).toContain('application/json');
  expect(got.headers['webhook-id']).toBe(request.event_id);
  expect(JSON.parse(got.body)).toEqual(request.payload);
  const verified = new Webhook(tenant.signingSecret).verify(got.body, got.headers);
  expect(verified).toEqual(request.payload);
  // Another secret does not verify it.
  const other = await system.newTenant('Other');
  expect(() => new Webhook(other.signingSecret).verify(got.body, got.headers)).toThrow();
  await waitFor(() => eventReached(tenant, request.event_id, 'delivered'), 5_000, 'delivered status');
  const view = await eventView(tenant, request.event_id);
  expect(view).toMatchObject({
    event_id: request.event_id,
    event_type: 'receivable.registered',
    url: r.url,
    status: 'delivered',
  });
  expect(view.attempts).toHaveLength(1);
  expect(view.attempts[0]).toMatchObject({ status_code: 200, error: null });
});

it('retries a receiver that fails twice: one successful delivery, three attempts logged', async () => {
  const r = await receiver((n) =>
    n < 2 ? { status: 500, body: `{"error":"database down (${n})"}` } : { status: 200 },
  );
  const request = publisher.request(tenant.tenantId, r.url);
  await publisher.publish(request);
  await waitFor(() => eventReached(tenant, request.event_id, 'delivered'), 10_000, 'delivered');
  await new Promise((res) => setTimeout(res, 500)); // nothing more may arrive
  expect(r.received.map((x) => x.answered)).toEqual([500, 500, 200]);
  expect(r.delivered()).toHaveLength(1);
  expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set([request.event_id]));
  const view = await eventView(tenant, request.event_id);
  expect(view.attempts.map((a) => a.status_code)).toEqual([500, 500, 200]);
  expect(view.attempts[0].error).toBe('HTTP 500');
  // What the receiver answered each time, as it said it.
  expect(view.attempts.map((a) => a.response_excerpt)).toEqual([
    '{"error":"database down (0)"}',
    '{"error":"database down (1)"}',
    '{"ok":true}',
  ]);
  // Attempts follow the schedule: each starts at least 150 ms after the previous one started. Timed
  // by their attempted_at, as the schedule is: at the receiver, a slow first connection (a loaded
  // machine) shortens the gap it sees, down to 33 ms measured.
  const started = view.attempts.map((a) => Date.parse(a.attempted_at));
  expect(started[1] - started[0]).toBeGreaterThanOrEqual(150);
  expect(started[2] - started[1]).toBeGreaterThanOrEqual(150);
});

it('ends dead after the schedule when the receiver never answers, then succeeds on retry', async () => {
  let answer = false;
  const r = await receiver(() => (answer ? { status: 204 } : 'hang'));
  const request = publisher.request(tenant.tenantId, r.url);
  await publisher.publish(request);
  await waitFor(() => eventReached(tenant, request.event_id, 'dead'), 15_000, 'dead');
  const dead = await eventView(tenant, request.event_id);
  expect(dead.attempts).toHaveLength(4); // the first attempt and 3 retries
  for (const a of dead.attempts) {
    expect(a.status_code).toBeNull();
    expect(a.error).toMatch(/no answer within 400 ms/);
    expect(a.response_excerpt).toBeNull();
  }
  const listed = await tenant.api.send<CallbackEventSummary[]>('GET', '/api/v1/callbacks?status=dead');
  expect(listed.json.map((e) => e.event_id)).toContain(request.event_id);

  answer = true;
  const retry = await tenant.api.post<CallbackRetryResponse>(`/api/v1/callbacks/${request.event_id}/retry`);
  expect(retry.status).toBe(202);
  expect(retry.json).toMatchObject({ status: 'success', event_id: request.event_id });
  await waitFor(() => eventReached(tenant, request.event_id, 'delivered'), 10_000, 'delivered after retry');
  const after = await eventView(tenant, request.event_id);
  expect(after.attempts).toHaveLength(5);
  expect(after.attempts[4].status_code).toBe(204);
  expect(r.delivered()).toHaveLength(1);
  // Not dead any more: a second retry is a conflict.
  const again = await tenant.api.post(`/api/v1/callbacks/${request.event_id}/retry`);
  expect(again.status).toBe(409);
  expect(again.headers.get('content-type')).toContain('application/problem+json');
});

it('delivers an event published twice (same event id) once', async () => {
  const r = await receiver();
  const request = publisher.request(tenant.tenantId, r.url);
  expect(await publisher.publish(request)).toEqual({ duplicate: false });
  expect(await publisher.publish(request)).toEqual({ duplicate: true });
  await waitFor(() => r.delivered().length === 1, 10_000, 'delivery');
  await new Promise((res) => setTimeout(res, 600));
  expect(r.forEvent(request.event_id)).toHaveLength(1);
});

it('delivers each request of a batch once, also when one of them is requested again in another message', async () => {
  const r = await receiver();
  const requests = Array.from({ length: 150 }, () => publisher.request(tenant.tenantId, r.url));
  await publisher.publishBatch(requests); // two messages: 100 and 50
  await publisher.publish(requests[120]); // a message of its own: not a JetStream duplicate, the same event
  await waitFor(() => r.delivered().length >= 150, 15_000, '150 deliveries');
  await new Promise((res) => setTimeout(res, 600));
  expect(r.received).toHaveLength(150);
  expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set(requests.map((q) => q.event_id)));
});

it('drops a malformed request alone (the rest of its batch is delivered) and a message that is no batch; takes a lone request of the older shape', async () => {
  const r = await receiver();
  const [first, last, lone, after] = [1, 2, 3, 4].map(() => publisher.request(tenant.tenantId, r.url));
  await publisher.publishRaw(
    { requests: [first, { ...first, event_id: 'evt_malformed', tenant_id: 'not-a-uuid' }, last] },
    'batch_with_a_bad_request',
  );
  await publisher.publishRaw({ requests: 'none' }, 'not_a_batch');
  await publisher.publishRaw(lone, 'a_request_without_its_batch'); // as producers published before batches
  await publisher.publish(after);
  await waitFor(() => r.delivered().length >= 4, 10_000, 'four deliveries');
  await new Promise((res) => setTimeout(res, 600));
  expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual(
    [first, last, lone, after].map((q) => q.event_id).sort(),
  );
  expect((await tenant.api.send('GET', '/api/v1/callbacks/evt_malformed')).status).toBe(404);
});

it('waits as long as Retry-After asks on 429', async () => {
  const r = await receiver((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
  const request = publisher.request(tenant.tenantId, r.url);
  await publisher.publish(request);
  await waitFor(() => r.delivered().length === 1, 10_000, 'delivery');
  expect(r.received[1].receivedAt - r.received[0].receivedAt).toBeGreaterThanOrEqual(950);
});

it('keeps a hanging host at its limit of 4 in flight, through timeouts and retries', async () => {
  const slow = await receiver(() => 'hang');
  for (let i = 0; i < 12; i++) await publisher.publish(publisher.request(tenant.tenantId, slow.url));
  await waitFor(() => slow.received.length >= 12, 15_000, 'slow host retried');
  expect(slow.maxInFlight).toBe(4);
});

describe('a receiver that hangs', () => {
  // Attempts time out after 30 s here, so a slot of the hanging host frees up only after 30 s: a
  // delivery elsewhere that had to wait for one would come after that. The claim is the order (the
  // other tenant is served while all four slots of the hanging host are still taken and unanswered),
  // not a time bound that a loaded machine could miss.
  let patient: TestSystem;
  let patientPublisher: CallbackPublisher;
  const own: CallbackReceiver[] = [];
  beforeAll(async () => {
    patient = await startSystem({ withCallbacks: true, env: { ...FAST, CALLBACK_TIMEOUT_MS: '30000' } });
    patientPublisher = await CallbackPublisher.connect(patient.busPrefix);
  });
  afterAll(async () => {
    // Receivers first: their hanging requests end, so callback-svc need not wait 30 s to stop.
    await Promise.allSettled(own.map((r) => r.stop()));
    await patientPublisher?.close();
    await patient?.stop();
  });

  it('does not delay another tenant', async () => {
    const slow = await new CallbackReceiver(() => 'hang').start();
    own.push(slow);
    const fast = await new CallbackReceiver().start();
    own.push(fast);
    const [hanging, other] = [await patient.newTenant('Hanging'), await patient.newTenant('Fast tenant')];
    for (let i = 0; i < 12; i++) await patientPublisher.publish(patientPublisher.request(hanging.tenantId, slow.url));
    await waitFor(() => slow.received.length >= 4, 15_000, 'slow host saturated');
    await patientPublisher.publish(patientPublisher.request(other.tenantId, fast.url));
    await waitFor(() => fast.delivered().length === 1, 15_000, 'fast delivery');
    // Delivered while the hanging host still holds its four first attempts, none answered or timed out.
    expect(slow.received).toHaveLength(4);
    expect(slow.inFlight).toBe(4);
    expect(slow.received.every((x) => x.answered === null)).toBe(true);
    expect(slow.maxInFlight).toBe(4);
  });
});

describe('visibility API', () => {
  it("keeps tenants apart: another tenant's event is 404 for get and retry, and absent from lists", async () => {
    const r = await receiver();
    const request = publisher.request(tenant.tenantId, r.url);
    await publisher.publish(request);
    await waitFor(() => r.delivered().length === 1, 10_000, 'delivery');
    const stranger = await system.newTenant('Stranger');
    expect((await stranger.api.send('GET', `/api/v1/callbacks/${request.event_id}`)).status).toBe(404);
    expect((await stranger.api.post(`/api/v1/callbacks/${request.event_id}/retry`)).status).toBe(404);
    const list = await stranger.api.send<unknown[]>('GET', '/api/v1/callbacks');
    expect(list.status).toBe(200);
    expect(list.json).toEqual([]);
    expect((await tenant.api.send('GET', '/api/v1/callbacks/evt_does_not_exist')).status).toBe(404);
  });

  it("shows an event's payload in its detail only: a registered one, and a booklet's link in booklet.sent", async () => {
    const t = await system.newTenant('Payloads');
    const r = await receiver();
    const charge = randomUUID();
    const registered = publisher.request(t.tenantId, r.url, {
      success: true,
      type: 'registered',
      accounts_receivable_id: charge,
      payment_data: {
        typeable_line: '23790448095616862379336011058009740430000124020',
        barcode: '23797404300001240200448056168623793601105800',
        our_number: '00000123',
        pix_copy_and_paste: '00020126450014br.gov.bcb.pix0118fulano@example.com5204000053039865802BR6304F170',
        qrcode_image: `https://bank.test/charges/${charge}/qrcode.png`,
        pdf: `https://bank.test/charges/${charge}/slip.pdf`,
      },
    });
    const slip = randomUUID();
    const download = `${system.gateway.url}/api/v1/bank-slip-booklet/downloads/${randomUUID()}?expires=1893456000&signature=c2lnbmF0dXJl`;
    const sent = publisher.request(
      t.tenantId,
      r.url,
      { success: true, type: 'sent', payment_slip_id: slip, download, installments: 12 },
      'booklet.sent',
    );
    await publisher.publish(registered);
    await publisher.publish(sent);
    await waitFor(() => r.delivered().length === 2, 10_000, 'deliveries');
    for (const request of [registered, sent]) {
      const view = await eventView(t, request.event_id);
      expect(view.event_type).toBe(request.event_type);
      // The object the receiver got, byte for byte the body it was signed over.
      const body = r.received.find((x) => x.headers['webhook-id'] === request.event_id)!.body;
      expect(view.payload).toEqual(JSON.parse(body));
      expect(view.payload).toEqual(request.payload);
    }
    const booklet = await eventView(t, sent.event_id);
    expect(booklet.payload?.download).toBe(download);
    // The list stays small: no payloads in its items.
    const list = await t.api.send<CallbackEventSummary[]>('GET', '/api/v1/callbacks');
    expect(list.json.map((e) => e.event_id).sort()).toEqual([registered.event_id, sent.event_id].sort());
    for (const item of list.json) expect(item).not.toHaveProperty('payload');
    // Another tenant gets a 404 that carries nothing of it.
    const stranger = await system.newTenant('Payload stranger');
    const refused = await stranger.api.send('GET', `/api/v1/callbacks/${sent.event_id}`);
    expect(refused.status).toBe(404);
    expect(JSON.stringify(refused.json)).not.toContain('signature');
  });

  it('pages newest first with X-Next-Cursor and filters by status', async () => {
    const t = await system.newTenant('Pager');
    const r = await receiver();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const req = publisher.request(t.tenantId, r.url);
      ids.push(req.event_id);
      await publisher.publish(req);
      await waitFor(() => r.delivered().length === i + 1, 10_000, `delivery ${i}`);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse<CallbackEventSummary[]> = await t.api.send(
        'GET',
        `/api/v1/callbacks?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.json.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.map((e) => e.event_id));
      cursor = res.headers.get('x-next-cursor');
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const delivered = await t.api.send<unknown[]>('GET', '/api/v1/callbacks?status=delivered');
    expect(delivered.json).toHaveLength(5);
    const pending = await t.api.send<unknown[]>('GET', '/api/v1/callbacks?status=pending');
    expect(pending.json).toHaveLength(0);
  });

  it('answers 422 naming the query parameter for a bad status, limit or cursor, and 401 without a token', async () => {
    for (const [query, param] of [
      ['status=lost', 'status'],
      ['limit=0', 'limit'],
      ['limit=9999', 'limit'],
      ['cursor=garbage', 'cursor'],
    ]) {
      const res = await tenant.api.send<Problem>('GET', `/api/v1/callbacks?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.json.errors?.[0].path).toContain(param);
      expect(res.json.errors?.[0].in).toBe('query');
    }
    expect((await system.api.send('GET', '/api/v1/callbacks')).status).toBe(401);
  });
});

describe('production mode (SSRF guard)', () => {
  let prod: TestSystem;
  // Production apps refuse a NATS that takes any login, as the shared one does.
  let bus: LoginCheckingNats;
  const lines: string[] = [];
  beforeAll(async () => {
    bus = await loginCheckingNats();
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    prod = await startSystem({
      withCallbacks: true,
      env: { ...FAST, ...productionEnv(bus.env) },
      callbackLogger: pino({ level: 'info' }, sink),
    });
  });
  afterAll(async () => {
    await prod?.stop();
    await bus?.nats.destroy();
  });

  it('refuses a loopback URL with a logged reason and never calls it', async () => {
    const r = await receiver();
    const t = await prod.newTenant('Prod');
    const prodPublisher = await CallbackPublisher.connect(prod.busPrefix, bus.nats.url);
    try {
      const request = prodPublisher.request(t.tenantId, r.url);
      await prodPublisher.publish(request);
      await waitFor(() => eventReached(t, request.event_id, 'dead'), 10_000, 'refused');
      const view = await eventView(t, request.event_id);
      expect(view.attempts).toHaveLength(1);
      expect(view.attempts[0].status_code).toBeNull();
      expect(view.attempts[0].error).toMatch(/loopback/);
      expect(r.received).toHaveLength(0);
      const logged = lines
        .map((l) => JSON.parse(l) as { msg: string; eventId?: string; reason?: string })
        .find((l) => l.msg === 'callback URL refused' && l.eventId === request.event_id);
      expect(logged?.reason).toMatch(/loopback/);
    } finally {
      await prodPublisher.close();
    }
  });
});

describe('the verification snippet of docs/api-in-short.md', () => {
  it('accepts our callbacks and rejects a tampered body or another secret', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const readme = readFileSync(join(__dirname, '..', '..', 'docs', 'api-in-short.md'), 'utf8');
    const code = /<!-- verify-callback -->\s*```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    const verifyCallback = new Function('require', `${code}\nreturn verifyCallback;`)(require) as (
      s: string,
      h: Record<string, string>,
      b: string,
    ) => boolean;

    const r = await receiver();
    const request = publisher.request(tenant.tenantId, r.url);
    await publisher.publish(request);
    await waitFor(() => r.delivered().length === 1, 10_000, 'delivery');
    const got = r.received[0];
    expect(verifyCallback(tenant.signingSecret, got.headers, got.body)).toBe(true);
    expect(verifyCallback(tenant.signingSecret, got.headers, got.body.replace('registered', 'paid'))).toBe(false);
    const other = await system.newTenant('Snippet other');
    expect(verifyCallback(other.signingSecret, got.headers, got.body)).toBe(false);
  });
});
