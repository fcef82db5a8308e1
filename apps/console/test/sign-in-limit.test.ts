import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';

/**
 * Refused sign-ins are limited per client address (CONSOLE_SIGN_IN_FAILURES_PER_MINUTE), before the
 * gateway is asked; the address is the TCP peer, or with TRUSTED_PROXY_HOPS the X-Forwarded-For entry
 * that many from the right. Against a stand-in gateway that counts the authentication calls it gets.
 */
const LIMIT = 3;

let gateway: Server;
let gatewayUrl: string;
let gatewayCalls = 0;
const consoles: ConsoleUnderTest[] = [];

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify(body));
}

function fakeJwt(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'EdDSA' })}.${part({ sub: 't1', iat, exp: iat + 3600 })}.sig`;
}

function gatewayAnswer(req: IncomingMessage, res: ServerResponse): void {
  gatewayCalls += 1;
  const path = req.url?.split('?')[0];
  const auth = req.headers.authorization;
  if (req.method === 'POST' && path === '/api/v1/authenticate' && auth === 'Bearer itk_good') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ access_token: fakeJwt(), token_type: 'Bearer', expires_in: 3600 }));
  }
  if (req.method === 'GET' && path === '/admin/v1/audit' && auth === 'Bearer opk_goodgoodgood') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ items: [], next_cursor: null }));
  }
  json(res, 401, { title: 'Unauthorized', status: 401, detail: 'unknown credential', code: 'unauthorized' });
}

/** A console on the stand-in gateway with the test's limit; its address. */
async function consoleWith(env: Record<string, string>): Promise<string> {
  const running = await startConsole(gatewayUrl, { CONSOLE_SIGN_IN_FAILURES_PER_MINUTE: String(LIMIT), ...env });
  consoles.push(running);
  return running.url;
}

beforeAll(async () => {
  gateway = createServer(gatewayAnswer);
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const running of consoles) await running.close();
  gateway.closeAllConnections();
  await new Promise((r) => gateway.close(r));
});

function signIn(base: string, form: 'tenant' | 'operator', secret: string, forwardedFor?: string) {
  const field = form === 'tenant' ? 'token' : 'credential';
  return fetch(`${base}/login/${form}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: base,
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: new URLSearchParams({ [field]: secret }).toString(),
  });
}

describe('behind one proxy (TRUSTED_PROXY_HOPS=1)', () => {
  let base: string;
  beforeAll(async () => {
    base = await consoleWith({ TRUSTED_PROXY_HOPS: '1' });
  });

  it('refuses an address after its refused sign-ins, with 429 and Retry-After, without asking the gateway', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await signIn(base, 'tenant', 'itk_wrong', '203.0.113.7')).status).toBe(401);
    const callsBefore = gatewayCalls;
    // Even the right token waits: the address has no tries left this minute.
    const held = await signIn(base, 'tenant', 'itk_good', '203.0.113.7');
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(held.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await held.text()).toContain('Too many refused sign-ins from your address');
    expect(held.headers.getSetCookie().some((c) => c.startsWith('console_session='))).toBe(false);
    expect(gatewayCalls).toBe(callsBefore);
  });

  it('leaves other addresses alone: the one X-Forwarded-For entry from the right is the address', async () => {
    // The client wrote 203.0.113.7 itself; the proxy appended the address it saw.
    const res = await signIn(base, 'tenant', 'itk_good', '203.0.113.7, 198.51.100.20');
    expect(res.status).toBe(302);
  });

  it('counts refusals only: many good sign-ins from one address all pass', async () => {
    for (let i = 0; i < LIMIT * 2; i++)
      expect((await signIn(base, 'tenant', 'itk_good', '198.51.100.30')).status).toBe(302);
  });

  it('counts the operator form too, a malformed credential included', async () => {
    expect((await signIn(base, 'operator', 'not-an-operator-credential', '198.51.100.40')).status).toBe(400);
    for (let i = 1; i < LIMIT; i++)
      expect((await signIn(base, 'operator', 'opk_wrongwrongwrong', '198.51.100.40')).status).toBe(401);
    expect((await signIn(base, 'operator', 'opk_goodgoodgood', '198.51.100.40')).status).toBe(429);
    expect((await signIn(base, 'operator', 'opk_goodgoodgood', '198.51.100.41')).status).toBe(302);
  });
});

describe('with no proxy trusted (the default)', () => {
  it('ignores X-Forwarded-For: a client cannot get fresh tries by writing another address', async () => {
    const base = await consoleWith({});
    for (let i = 0; i < LIMIT; i++)
      expect((await signIn(base, 'tenant', 'itk_wrong', `192.0.2.${i + 1}`)).status).toBe(401);
    expect((await signIn(base, 'tenant', 'itk_good', '192.0.2.99')).status).toBe(429);
  });
});

describe('turned off (0)', () => {
  it('takes any number of refused sign-ins', async () => {
    const base = await consoleWith({ CONSOLE_SIGN_IN_FAILURES_PER_MINUTE: '0' });
    for (let i = 0; i < LIMIT + 2; i++) expect((await signIn(base, 'tenant', 'itk_wrong')).status).toBe(401);
    expect((await signIn(base, 'tenant', 'itk_good')).status).toBe(302);
  });
});
