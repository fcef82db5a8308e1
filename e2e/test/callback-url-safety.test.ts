import { randomUUID } from 'node:crypto';
import { connectBus, type Bus } from '@payments/bus';
import {
  QueueGroups,
  Subjects,
  type BookletRequestCommand,
  type Problem,
  type ReceivablesCreateCommand,
} from '@payments/contracts';
import { STREAM_MAX_BYTES_DEFAULT } from '@payments/config';
import { createLogger } from '@payments/logger';
import { receivablePayload } from '../support/fixtures';
import { loginCheckingNats, productionEnv, type LoginCheckingNats } from '../support/production-env';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * SSRF at intake (Callback URLs): a production gateway refuses a url_callback whose host is a
 * literal non-public address or localhost with 422 on the field's path, before anything reaches the
 * bus, so nothing is stored. This test plays receivables-svc and booklet-svc on the bus: had the
 * gateway forwarded a refused request, the recorder would have it.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Hosts the production gateway must refuse at intake, with the reason it gives. */
const REFUSED: Array<[url: string, message: string]> = [
  [
    'http://[fec0::1]/callbacks',
    'must not point to a deprecatedSiteLocal address; callbacks go only to public addresses',
  ],
  ['http://[100::1]/callbacks', 'must not point to a discard address; callbacks go only to public addresses'],
  [
    'http://[::127.0.0.1]:8080/callbacks',
    'must not point to a loopback address; callbacks go only to public addresses',
  ],
  ['http://10.0.0.1/callbacks', 'must not point to a private address; callbacks go only to public addresses'],
  ['http://localhost:8080/callbacks', 'must not point to localhost'],
  [
    'http://[::ffff:169.254.169.254]/latest',
    'must not point to a linkLocal address; callbacks go only to public addresses',
  ],
];

describe('callback URL safety at intake, production gateway', () => {
  let system: TestSystem;
  let tenant: TestTenant;
  let recorder: Bus;
  const creates: ReceivablesCreateCommand[] = [];
  const booklets: BookletRequestCommand[] = [];
  // A production gateway refuses a NATS that takes any login, as the shared one does.
  let bus: LoginCheckingNats;

  beforeAll(async () => {
    bus = await loginCheckingNats();
    system = await startSystem({
      withoutClients: true,
      // Provisioned in development, as the other apps run: the production gateway's larger default
      // STREAM_MAX_BYTES would find the streams smaller than it needs and refuse to start.
      env: { NATS_URL: bus.nats.url, STREAM_MAX_BYTES: String(STREAM_MAX_BYTES_DEFAULT.development) },
      appEnv: { gateway: productionEnv(bus.env) },
    });
    // Created by the test process (development), so the tenant has the sandbox provider account.
    tenant = await system.newTenant('Safe Callbacks Ltda');
    recorder = await connectBus({
      url: bus.nats.url,
      prefix: system.busPrefix,
      name: 'test-recorder',
      logger: createLogger('test', 'silent'),
    });
    recorder.serve(
      Subjects.receivables.create,
      async (command) => {
        creates.push(command);
        return { status: 'success', message: `${command.receivables.length} receivable(s) received` };
      },
      { queue: QueueGroups.receivables },
    );
    recorder.serve(
      Subjects.booklets.request,
      async (command) => {
        booklets.push(command);
        return {
          success: true,
          type: 'preparing',
          message: 'Booklet is being prepared',
          payment_slip_id: command.payment_slip_id,
        };
      },
      { queue: QueueGroups.booklets },
    );
    await recorder.connection.flush();
  });

  afterAll(async () => {
    await recorder?.close();
    await system?.stop();
    await bus?.nats.destroy();
  });

  beforeEach(() => {
    creates.length = 0;
    booklets.length = 0;
  });

  it.each(REFUSED)(
    'refuses a charge calling back %s: 422 on /0/url_callback, nothing forwarded',
    async (url, message) => {
      const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [
        receivablePayload(randomUUID(), url),
      ]);
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json.errors).toEqual([{ path: '/0/url_callback', message }]);
      expect(creates).toHaveLength(0);
    },
  );

  it('names the refused item of a batch and forwards none of it; the same key works once fixed', async () => {
    const key = randomUUID();
    const good = receivablePayload(randomUUID(), 'https://erp.example.com/callbacks');
    const bad = receivablePayload(randomUUID(), 'http://192.168.1.1/callbacks');
    const refused = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [good, bad], key);
    expect(refused.status).toBe(422);
    expect(refused.json.errors?.map((e) => e.path)).toEqual(['/1/url_callback']);
    expect(creates).toHaveLength(0);

    // The refusal was not kept under the Idempotency-Key.
    const fixed = { ...bad, url_callback: 'http://8.8.8.8/callbacks' };
    const accepted = await tenant.api.postIdempotent('/api/v1/accounts-receivable', [good, fixed], key);
    expect(accepted.status).toBe(202);
    expect(creates).toHaveLength(1);
    expect(creates[0].receivables.map((r) => r.url_callback)).toEqual([
      'https://erp.example.com/callbacks',
      'http://8.8.8.8/callbacks',
    ]);
  });

  it.each(['http://8.8.8.8/callbacks', 'https://[2001:4860:4860::8888]/callbacks', 'https://erp.example.com/cb'])(
    'accepts a charge calling back %s and forwards it to receivables-svc',
    async (url) => {
      const res = await tenant.api.postIdempotent('/api/v1/accounts-receivable', [
        receivablePayload(randomUUID(), url),
      ]);
      expect(res.status).toBe(202);
      expect(creates.map((c) => c.receivables[0].url_callback)).toEqual([url]);
      expect(creates[0].tenant_id).toBe(tenant.tenantId);
    },
  );

  it.each(REFUSED)(
    'refuses a booklet calling back %s: 422 on /url_callback, nothing forwarded',
    async (url, message) => {
      const res = await tenant.api.postIdempotent<Problem>(`/api/v1/bank-slip-booklet/${randomUUID()}`, {
        url_callback: url,
      });
      expect(res.status).toBe(422);
      expect(res.json.errors).toEqual([{ path: '/url_callback', message }]);
      expect(booklets).toHaveLength(0);
    },
  );

  it('accepts a booklet calling back a public address', async () => {
    const paymentSlipId = randomUUID();
    const res = await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${paymentSlipId}`, {
      url_callback: 'https://[2001:4860:4860::8888]/booklets',
    });
    expect(res.status).toBe(202);
    expect(booklets).toEqual([
      {
        tenant_id: tenant.tenantId,
        payment_slip_id: paymentSlipId,
        url_callback: 'https://[2001:4860:4860::8888]/booklets',
        // The booklet's identity derives from it: a retried request builds the same booklet.
        idempotency_key: expect.any(String),
      },
    ]);
  });
});

describe('callback URLs at intake, development gateway', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startSystem({ withoutClients: true });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('lets private and loopback receivers through (tests and developers deliver to 127.0.0.1)', async () => {
    const tenant = await system.newTenant('Dev Callbacks');
    const recorder = await connectBus({
      url: NATS_URL,
      prefix: system.busPrefix,
      name: 'test-recorder-dev',
      logger: createLogger('test', 'silent'),
    });
    try {
      const received: string[] = [];
      recorder.serve(
        Subjects.receivables.create,
        async (command) => {
          received.push(...command.receivables.map((r) => r.url_callback));
          return { status: 'success', message: 'received' };
        },
        { queue: QueueGroups.receivables },
      );
      await recorder.connection.flush();
      const urls = ['http://127.0.0.1:9000/cb', 'http://localhost:9000/cb', 'http://[fec0::1]/cb'];
      const res = await tenant.api.postIdempotent(
        '/api/v1/accounts-receivable',
        urls.map((url) => receivablePayload(randomUUID(), url)),
      );
      expect(res.status).toBe(202);
      expect(received).toEqual(urls);
    } finally {
      await recorder.close();
    }
  });
});
