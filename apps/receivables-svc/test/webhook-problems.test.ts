import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createMetricsRegistry } from '@payments/metrics';
import { PROBLEM_CONTENT_TYPE, type ProviderKind } from '@payments/contracts';
import { paymentMetrics } from '../src/transport/metrics';
import { accountVersion, serveProviderWebhooks, useStateFixture, type StateFixture } from './state-fixture';

// receivables-svc's webhook port answers errors as the gateway does (libs/http-problem): a body over
// 256 KiB is 413 naming the limit, a body that is not a notice 400, both application/problem+json and
// without a stack trace. Real Postgres and our real HTTP server.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

let webhooks: { port: number; stop(): Promise<void> };
const metrics = createMetricsRegistry('receivables-test');

beforeAll(async () => {
  webhooks = await serveProviderWebhooks(f, { metrics, paymentMetrics: paymentMetrics(metrics) });
});
afterAll(async () => {
  await webhooks?.stop();
});

/** A stored provider account version of a new tenant, as intake writes it. */
async function storedAccount(provider: ProviderKind): Promise<string> {
  const a = accountVersion(randomUUID(), provider);
  await sql`insert into provider_accounts (id, tenant_id, provider, account_key, beneficiary, base_url, sealed_credentials)
    values (${a.account_id}::uuid, ${a.tenant_id}::uuid, ${a.provider}, ${a.account_key},
      ${JSON.stringify(a.beneficiary)}::jsonb, ${a.base_url}, ${a.sealed_credentials})`.execute(f.db);
  return a.account_id;
}

interface Answer {
  status: number;
  type: string;
  text: string;
}

/**
 * Posts `body` with node's http client: sent whole with its Content-Length, or in chunks without one
 * (so the port finds the size while reading). The answer is read even when the port stops reading
 * the body and closes the connection.
 */
function post(path: string, body: Buffer, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: '127.0.0.1',
        port: webhooks.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': body.length }) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers['content-type'] ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    // The port may close while the body is still being sent: the answer is what counts.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    if (chunked) {
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

function problemOf(answer: Answer): { code: string; detail: string; status: number } {
  expect(answer.type).toContain(PROBLEM_CONTENT_TYPE);
  expect(answer.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
  return JSON.parse(answer.text) as { code: string; detail: string; status: number };
}

const oversized = () => Buffer.from(JSON.stringify({ pix: [{ txid: 'x'.repeat(300 * 1024) }] }));

describe("receivables-svc's webhook port", () => {
  it.each([
    ['pix', (id: string) => `/provider/webhooks/pix/${id}/pix`],
    ['inter', (id: string) => `/provider/webhooks/inter/${id}`],
  ] as const)(
    'answers a body over 256 KiB on the %s route with 413 problem+json naming the limit',
    async (provider, path) => {
      const id = await storedAccount(provider);
      for (const chunked of [false, true]) {
        const answer = await post(path(id), oversized(), chunked);
        expect(answer.status).toBe(413);
        expect(problemOf(answer)).toMatchObject({
          status: 413,
          code: 'payload_too_large',
          detail: 'the request body is larger than 256 KiB',
        });
      }
    },
  );

  it('answers 413 problem+json on the sandbox route too, before the signature is looked at', async () => {
    const answer = await post('/provider/webhooks/bank-sandbox', oversized());
    expect(answer.status).toBe(413);
    expect(problemOf(answer)).toMatchObject({ code: 'payload_too_large' });
  });

  it.each([
    ['pix', (id: string) => `/provider/webhooks/pix/${id}/pix`],
    ['inter', (id: string) => `/provider/webhooks/inter/${id}`],
  ] as const)('answers malformed JSON on the %s route with 400 problem+json', async (provider, path) => {
    const id = await storedAccount(provider);
    const answer = await post(path(id), Buffer.from('{"pix": [ not json'));
    expect(answer.status).toBe(400);
    expect(problemOf(answer)).toMatchObject({ status: 400, code: 'malformed_json' });
  });

  it('answers an unknown account and an unknown route with 404 problem+json', async () => {
    const unknownAccount = await post(`/provider/webhooks/pix/${randomUUID()}/pix`, Buffer.from('{"pix":[]}'));
    expect(unknownAccount.status).toBe(404);
    expect(problemOf(unknownAccount)).toMatchObject({ code: 'not_found' });
    const unknownRoute = await post('/provider/webhooks/nowhere', Buffer.from('{}'));
    expect(unknownRoute.status).toBe(404);
    expect(problemOf(unknownRoute)).toMatchObject({ code: 'not_found' });
  });

  it('still takes a notice within the limit', async () => {
    const id = await storedAccount('pix');
    const answer = await post(`/provider/webhooks/pix/${id}/pix`, Buffer.from('{"pix":[]}'));
    expect(answer).toMatchObject({ status: 200, text: '{"stored":0}' });
  });
});
