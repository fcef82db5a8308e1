import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { ServiceError } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { bytesInWords, problemErrors, toServiceError } from '../src';

// The error middleware on a real Koa app and HTTP server: what each failure is on the wire.

const logged: Array<{ level: string; msg: string }> = [];
const logger = {
  error: (_obj: unknown, msg: string) => logged.push({ level: 'error', msg }),
  warn: (_obj: unknown, msg: string) => logged.push({ level: 'warn', msg }),
} as unknown as Logger;

let server: Server;
let base: string;
let fail: () => unknown = () => undefined;

beforeAll(async () => {
  const app = new Koa();
  app.use(problemErrors({ logger, service: 'the test port', bodyLimitBytes: 256 * 1024, reference: 'see the docs' }));
  app.use(async (ctx) => {
    if (ctx.path === '/fail') {
      const err = fail();
      throw err;
    }
    if (ctx.path === '/ok') ctx.body = { ok: true };
  });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function answerTo(thrown: unknown) {
  fail = () => thrown;
  const res = await fetch(`${base}/fail`);
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('problemErrors', () => {
  it('answers a ServiceError as its problem', async () => {
    const answer = await answerTo(new ServiceError('malformed_json', 'not a notice'));
    expect(answer).toEqual({
      status: 400,
      type: 'application/problem+json',
      body: expect.objectContaining({
        status: 400,
        code: 'malformed_json',
        detail: 'not a notice',
        title: 'Malformed JSON',
      }),
    });
  });

  it("answers a library's 413 naming the port's limit, and its 415", async () => {
    const tooLarge = await answerTo(Object.assign(new Error('request entity too large'), { status: 413 }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({
      code: 'payload_too_large',
      detail: 'the request body is larger than 256 KiB',
    });
    const mediaType = await answerTo(Object.assign(new Error('x'), { statusCode: 415 }));
    expect(mediaType).toMatchObject({ status: 415, type: 'application/problem+json' });
  });

  it('answers the unexpected with a 500 problem, logged, without its message or stack', async () => {
    logged.length = 0;
    const answer = await answerTo(new TypeError('secret internals at /app/src/x.ts:12'));
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ code: 'internal_error', detail: 'an unexpected error occurred' });
    expect(JSON.stringify(answer.body)).not.toContain('secret internals');
    expect(logged).toEqual([{ level: 'error', msg: 'request failed' }]);
  });

  it('answers an unknown route with a 404 problem naming the reference, and leaves answers alone', async () => {
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found', detail: 'no route GET /nowhere: see the docs' });
    const ok = await fetch(`${base}/ok`);
    expect(await ok.json()).toEqual({ ok: true });
  });
});

describe('toServiceError', () => {
  const wording = { service: 'the gateway', bodyLimitBytes: 1024 * 1024 };
  it('keeps a thrown 4xx a 4xx, and names Postgres out of reach as 503', () => {
    expect(toServiceError(Object.assign(new Error('boom'), { status: 418 }), wording).status).toBe(400);
    expect(toServiceError(Object.assign(new Error('boom'), { status: 413 }), wording).detail).toBe(
      'the request body is larger than 1 MiB',
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toServiceError(refused, wording)).toMatchObject({
      code: 'service_unavailable',
      detail: 'the gateway cannot reach its database now; try again shortly',
    });
  });

  it('writes limits as people do', () => {
    expect([bytesInWords(1024 * 1024), bytesInWords(256 * 1024), bytesInWords(1000)]).toEqual([
      '1 MiB',
      '256 KiB',
      '1000 bytes',
    ]);
  });
});
