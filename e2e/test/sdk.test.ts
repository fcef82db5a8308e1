import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  jwtClaims,
  ok,
  PaymentsApiError,
  PaymentsClient,
  verifyWebhook,
  WebhookVerificationError,
} from '@payments/sdk';
import type { components } from '@payments/sdk';
import { runAdmin } from '../support/admin-cli';
import { VALID_CPF } from '../support/fixtures';
import { CallbackReceiver, waitFor, type ReceivedCallback } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * @payments/sdk against the real gateway: the token exchange and its renewal, Idempotency-Keys,
 * retries on 429 and 503 after Retry-After, cursor iteration, and the verification of real callbacks
 * (also during a signing-secret rotation). The rate limit is low so that bursts get 429s.
 */

type Schemas = components['schemas'];

/** One request as it left the SDK (after its middleware), with the status it got. */
interface Sent {
  method: string;
  path: string;
  idempotencyKey: string | null;
  authorization: string | null;
  body: string;
  status: number;
  /** The gateway's X-Request-Id of the answer. */
  requestId: string | null;
  at: number;
}

let system: TestSystem;
let receiver: CallbackReceiver;

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    env: { RATE_LIMIT_PER_SECOND: '4', RATE_LIMIT_BURST: '4', CALLBACK_POLL_INTERVAL_MS: '50' },
  });
  receiver = await new CallbackReceiver().start();
}, 90_000);
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

/** An SDK client for the tenant whose every request is recorded in `sent`; `skewMs` moves its clock. */
function sdkFor(tenant: TestTenant, options: { skewMs?: () => number; maxAttempts?: number } = {}) {
  const sent: Sent[] = [];
  const client = new PaymentsClient({
    baseUrl: system.gateway.url,
    integrationToken: tenant.integrationToken,
    now: () => Date.now() + (options.skewMs?.() ?? 0),
    retry: { maxAttempts: options.maxAttempts ?? 4 },
    fetch: async (request) => {
      const entry: Sent = {
        method: request.method,
        path: new URL(request.url).pathname,
        idempotencyKey: request.headers.get('idempotency-key'),
        authorization: request.headers.get('authorization'),
        body: await request.clone().text(),
        status: 0,
        requestId: null,
        at: Date.now(),
      };
      sent.push(entry);
      const response = await fetch(request);
      entry.status = response.status;
      entry.requestId = response.headers.get('x-request-id');
      return response;
    },
  });
  return { client, sent };
}

function clientItem(): Schemas['ClientCreateItem'] {
  return { client_id: randomUUID(), name: 'Maria da Silva', cnpj_cpf: VALID_CPF };
}

function chargeItem(clientId: string, slipId: string): Schemas['ReceivableCreateItem'] {
  return {
    url_callback: receiver.url,
    client_id: clientId,
    payment_slip_id: slipId,
    account_receivable_id: randomUUID(),
    payment_method: 1,
    due_date: '2026-12-15',
    emission_date: '2026-11-23',
    value: 150.75,
    discount_type: 'NaoTemDesconto',
    fine_value: 2,
    interest_amount: 0.05,
  };
}

const callbacksOf = (ids: string[]) =>
  receiver.received.filter((r) => ids.some((id) => r.body.includes(id)) && r.answered === 200);

describe('token exchange', () => {
  it('authenticates with the integration token, renews before exp, and authenticates again after it', async () => {
    const tenant = await system.newTenant('SDK tokens');
    let skew = 0;
    const { client, sent } = sdkFor(tenant, { skewMs: () => skew });
    const list = () => client.api.GET('/api/v1/callbacks', {}).then((r) => ok(r, 'list callbacks'));

    await list();
    expect(sent.map((s) => `${s.path} ${s.status}`)).toEqual(['/api/v1/authenticate 200', '/api/v1/callbacks 200']);
    expect(sent[0]!.authorization).toBe(`Bearer ${tenant.integrationToken}`);
    const first = await client.tokens.accessToken();
    const { exp, iat } = jwtClaims(first);
    expect(exp! - iat!).toBe(3600);
    expect(sent[1]!.authorization).toBe(`Bearer ${first}`);

    // 30 s before exp: inside the 60 s margin, so the SDK renews with the current JWT.
    skew = exp! * 1000 - 30_000 - Date.now();
    await list();
    expect(sent.slice(2).map((s) => `${s.path} ${s.status}`)).toEqual([
      '/api/v1/refresh-token 200',
      '/api/v1/callbacks 200',
    ]);
    expect(sent[2]!.authorization).toBe(`Bearer ${first}`);
    const renewed = sent[3]!.authorization!.replace('Bearer ', '');
    expect(renewed).not.toBe(first);
    expect(jwtClaims(renewed).exp).toBeGreaterThanOrEqual(exp!);

    // Past the renewed JWT's exp: renewing needs a valid JWT, so it authenticates again.
    skew = jwtClaims(renewed).exp! * 1000 + 10_000 - Date.now();
    await list();
    expect(sent.slice(4).map((s) => s.path)).toEqual(['/api/v1/authenticate', '/api/v1/callbacks']);
  });

  it('a revoked integration token is a PaymentsApiError with the 401 problem and the request id', async () => {
    const tenant = await system.newTenant('SDK revoked');
    const { client, sent } = sdkFor({ ...tenant, integrationToken: 'itk_not_a_token' });
    const err = await client.tokens.accessToken().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentsApiError);
    expect((err as PaymentsApiError).status).toBe(401);
    const answered = sent.find((s) => s.path === '/api/v1/authenticate' && s.status === 401);
    expect(answered?.requestId).toMatch(/\S/);
    expect((err as PaymentsApiError).requestId).toBe(answered?.requestId);
    expect((err as PaymentsApiError).message).toContain(answered?.requestId ?? 'no request id');
  });
});

describe('idempotency and retries', () => {
  it('adds a fresh Idempotency-Key to each mutating call, and sends the one given', async () => {
    const tenant = await system.newTenant('SDK keys');
    const { client, sent } = sdkFor(tenant);
    const body = [clientItem()];
    const created = await client.api.POST('/api/v1/clients', { body });
    expect(created.response.status).toBe(201); // the gateway refuses this call without a key (400)
    await client.api.POST('/api/v1/clients', { body: [clientItem()] });
    const keys = sent.filter((s) => s.path === '/api/v1/clients').map((s) => s.idempotencyKey);
    expect(keys).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(keys[0]).not.toBe(keys[1]);
    expect(sent.find((s) => s.path === '/api/v1/authenticate')!.idempotencyKey).toBeNull();

    const again = await client.api.POST('/api/v1/clients', {
      body,
      params: { header: { 'Idempotency-Key': keys[0]! } },
    });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(created.data);
  });

  it('retries 429s after Retry-After with the same Idempotency-Key until each call gets through', async () => {
    const tenant = await system.newTenant('SDK burst');
    const { client, sent } = sdkFor(tenant, { maxAttempts: 6 });
    await client.tokens.accessToken();
    // Twelve at once against a burst of 4 per second: some are refused however slowly a loaded
    // machine lets them arrive (the bucket refills 4 per second).
    const results = await Promise.all(
      Array.from({ length: 12 }, () => client.api.POST('/api/v1/clients', { body: [clientItem()] })),
    );
    expect(results.map((r) => r.response.status)).toEqual(Array(12).fill(201));

    const calls = sent.filter((s) => s.path === '/api/v1/clients');
    const limited = calls.filter((s) => s.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    for (const refused of limited) {
      const retry = calls.find((s) => s.at > refused.at && s.idempotencyKey === refused.idempotencyKey);
      expect(retry).toBeDefined();
      expect(retry!.body).toBe(refused.body);
      expect(retry!.at - refused.at).toBeGreaterThanOrEqual(990); // Retry-After: 1
    }
    expect(new Set(calls.filter((s) => s.status === 201).map((s) => s.idempotencyKey)).size).toBe(12);
  });
});

describe('iteration and callbacks', () => {
  let tenant: TestTenant;
  let chargeIds: string[];

  beforeAll(async () => {
    tenant = await system.newTenant('SDK pages');
    const client = tenant.sdk; // what startSystem gives every e2e tenant
    const holder = clientItem();
    ok(await client.api.POST('/api/v1/clients', { body: [holder] }), 'create client');
    const slip = randomUUID();
    const charges = [1, 2, 3].map(() => chargeItem(holder.client_id, slip));
    ok(await client.api.POST('/api/v1/accounts-receivable', { body: charges }), 'create charges');
    chargeIds = charges.map((c) => c.account_receivable_id);
    await waitFor(() => callbacksOf(chargeIds).length >= 3, 30_000, 'three registered callbacks');
  }, 60_000);

  it('walks every page of a search and of the callback list by X-Next-Cursor', async () => {
    const { client, sent } = sdkFor(tenant);
    const found: string[] = [];
    for await (const item of client.searchReceivables({
      state: 'all',
      start_date: '2026-11-01',
      end_date: '2026-11-30',
      limit: 1,
    }))
      found.push(item.accounts_receivable_id);
    expect(found.sort()).toEqual([...chargeIds].sort());
    // Pages that got through (the low rate limit makes the SDK retry some after a 429).
    const searches = sent.filter((s) => s.path.endsWith('/search') && s.status === 200);
    expect(searches).toHaveLength(3);
    expect(searches.map((s) => 'cursor' in (JSON.parse(s.body) as object))).toEqual([false, true, true]);
    // Safe operations carry no Idempotency-Key: the gateway keeps nothing of them, and a retry is a new search.
    expect(sent.filter((s) => s.path.endsWith('/search')).map((s) => s.idempotencyKey)).toEqual(
      sent.filter((s) => s.path.endsWith('/search')).map(() => null),
    );
    const uuid = chargeIds[0]!;
    const consulted = await client.api.POST('/api/v1/accounts-receivable/{uuid}/consult-transaction', {
      params: { path: { uuid } },
    });
    const history = await client.api.GET('/api/v1/accounts-receivable/{uuid}/history', { params: { path: { uuid } } });
    expect([consulted.response.status, history.response.status]).toEqual([200, 200]);
    const safe = sent.filter((s) => s.path.endsWith('/consult-transaction') || s.path.endsWith('/history'));
    expect(safe.map((s) => s.idempotencyKey)).toEqual(safe.map(() => null));

    const events: string[] = [];
    for await (const event of client.callbacks({ limit: 1 })) events.push(event.event_id);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(new Set(events).size).toBe(events.length);
    expect(sent.filter((s) => s.path === '/api/v1/callbacks' && s.status === 200)).toHaveLength(events.length);
  });

  it('verifies real callbacks, and refuses a changed body, a wrong secret, an old timestamp, no headers', () => {
    const got = callbacksOf(chargeIds)[0]!;
    expect(verifyWebhook(tenant.signingSecret, got.headers, got.body)).toBe(got.headers['webhook-id']);
    expect(verifyWebhook(tenant.signingSecret, new Headers(got.headers), Buffer.from(got.body))).toBe(
      got.headers['webhook-id'],
    );
    const reason = (fn: () => unknown) => {
      try {
        fn();
        return 'accepted';
      } catch (err) {
        return err instanceof WebhookVerificationError ? err.reason : String(err);
      }
    };
    const other = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    expect(reason(() => verifyWebhook(tenant.signingSecret, got.headers, got.body.replace('}', ',"x":1}')))).toBe(
      'bad_signature',
    );
    expect(reason(() => verifyWebhook(other, got.headers, got.body))).toBe('bad_signature');
    const later = () => new Date(Number(got.headers['webhook-timestamp']) * 1000 + 301_000);
    expect(reason(() => verifyWebhook(tenant.signingSecret, got.headers, got.body, { now: later }))).toBe(
      'stale_timestamp',
    );
    expect(
      reason(() => verifyWebhook(tenant.signingSecret, got.headers, got.body, { now: later, toleranceSeconds: 600 })),
    ).toBe('accepted');
    expect(reason(() => verifyWebhook(tenant.signingSecret, { ...got.headers, 'webhook-id': '' }, got.body))).toBe(
      'missing_headers',
    );
  });

  it('verifies a callback signed during a secret rotation with the old secret, the new one, or both', async () => {
    const run = await runAdmin(system.databaseUrl, [
      ...['tenant', 'rotate-secret', '--tenant', tenant.tenantId, '--overlap-hours', '1', '--json'],
    ]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const rotated = (JSON.parse(run.stdout) as { signing_secret: string }).signing_secret;

    const { client } = sdkFor(tenant);
    const target = chargeIds[0]!;
    const cancel = await client.api.POST('/api/v1/accounts-receivable/{uuid}/cancel', {
      params: { path: { uuid: target } },
    });
    expect(cancel.response.status).toBe(202);
    let got: ReceivedCallback | undefined;
    await waitFor(
      () => (got = receiver.received.find((r) => r.body.includes(target) && r.body.includes('"status"'))) !== undefined,
      30_000,
      'the cancellation callback',
    );
    expect(got!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    const other = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    for (const secrets of [tenant.signingSecret, rotated, [other, rotated], [tenant.signingSecret, other]])
      expect(verifyWebhook(secrets, got!.headers, got!.body)).toBe(got!.headers['webhook-id']);
    expect(() => verifyWebhook([other], got!.headers, got!.body)).toThrow(WebhookVerificationError);
  });
});

it("runs the README's SDK example as written: a client created, the search walked", async () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const example = /<!-- sdk-example -->\s*```ts\n([\s\S]*?)\n```\n/.exec(readme)?.[1];
  if (example === undefined) throw new Error('README.md has no ```ts block after <!-- sdk-example -->');
  const tenant = await system.newTenant('SDK README');
  // Inside e2e/ so that @payments/sdk resolves; .mts for the top-level await.
  const file = join(__dirname, '..', `.readme-sdk-example-${randomUUID()}.mts`);
  writeFileSync(file, example);
  try {
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', file],
        {
          env: {
            ...process.env,
            GATEWAY_URL: system.gateway.url,
            INTEGRATION_TOKEN: tenant.integrationToken,
            SIGNING_SECRET: tenant.signingSecret,
          },
          timeout: 30_000,
        },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(output.trim()).toBe('1 client(s) created, 0 already registered');
  } finally {
    rmSync(file, { force: true });
  }
});

// Last: it stops clients-svc, so every later clients call would answer 503.
it('retries a 503 after its Retry-After with the same Idempotency-Key, then reports it', async () => {
  const tenant = await system.newTenant('SDK unavailable');
  const { client, sent } = sdkFor(tenant, { maxAttempts: 2 });
  await client.tokens.accessToken();
  await system.clients!.stop();
  const result = await client.api.POST('/api/v1/clients', { body: [clientItem()] });
  expect(result.response.status).toBe(503);
  expect(() => ok(result, 'create clients')).toThrow(/create clients answered 503: service_unavailable/);
  const [first, second, ...rest] = sent.filter((s) => s.path === '/api/v1/clients');
  expect(rest).toHaveLength(0);
  expect([first!.status, second!.status]).toEqual([503, 503]);
  expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
  expect(second!.at - first!.at).toBeGreaterThanOrEqual(4_990); // Retry-After: 5
}, 30_000);
