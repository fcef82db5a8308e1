import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { SESSION_COOKIE } from '../src/http/cookies';
import { SessionCodec } from '../src/session/codec';
import { startConsole } from './support/console-under-test';

/**
 * A gateway that fails without a problem document, seen from the pages of both roles: the tenant's
 * (public API) and the operator's (admin API) go through the one fetch wrapper and the one
 * "answer -> problem" rule, so each failure reads the same on both.
 */
const DEADLINE_MS = 300;
const TENANT_PAGE = '/tenant/charges';
const OPERATOR_PAGE = '/operator/tenants';

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listening(server: Server | ReturnType<typeof createTcpServer>, sockets: Set<Socket>): Promise<string> {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a server, its open connections first (a hung one never ends by itself). */
function closing(server: Server | ReturnType<typeof createTcpServer>, sockets: Set<Socket>): () => Promise<void> {
  return async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
}

/** A TCP server that takes connections and never answers a byte. */
async function silentGateway(): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createTcpServer(() => undefined);
  return { url: await listening(server, sockets), close: closing(server, sockets) };
}

/** A proxy in front of a gateway that is down: an HTML 502 for everything. */
async function proxyGateway(): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' });
    res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
  });
  return { url: await listening(server, sockets), close: closing(server, sockets) };
}

/** A console on both APIs of `gatewayUrl`, with the deadline set by CONSOLE_GATEWAY_TIMEOUT_MS, and a cookie per role. */
async function consoleOn(gatewayUrl: string, deadlineMs = DEADLINE_MS) {
  const running = await startConsole(gatewayUrl, { CONSOLE_GATEWAY_TIMEOUT_MS: String(deadlineMs) });
  const codec = new SessionCodec(running.config.sessionKey);
  const now = Date.now();
  // Sessions sealed here: signing in would need the gateway this test keeps from answering.
  const cookie = {
    tenant: `${SESSION_COOKIE}=${codec.seal({ role: 'tenant', jwt: 'a.b.c', tenantId: 't1', issuedAt: now, expiresAt: now + 3_600_000 })}`,
    operator: `${SESSION_COOKIE}=${codec.seal({ role: 'operator', credential: 'opk_testtesttest', startedAt: now, expiresAt: now + 600_000 })}`,
  };
  return { ...running, cookie };
}

describe('a gateway that does not answer within the deadline', () => {
  let gateway: Running;
  let console_: Awaited<ReturnType<typeof consoleOn>>;

  beforeAll(async () => {
    gateway = await silentGateway();
    console_ = await consoleOn(gateway.url);
  });

  afterAll(async () => {
    await console_.close();
    await gateway.close();
  });

  it.each([
    ['tenant', TENANT_PAGE],
    ['operator', OPERATOR_PAGE],
  ] as const)(
    'is the "did not answer in time" page on a %s page, after the configured deadline',
    async (role, path) => {
      const started = Date.now();
      const res = await fetch(`${console_.url}${path}`, {
        headers: { cookie: console_.cookie[role] },
        redirect: 'manual',
      });
      const html = await res.text();
      const took = Date.now() - started;
      expect(res.status).toBe(502);
      expect(html).toContain('O gateway não respondeu');
      const api = role === 'tenant' ? 'gateway' : 'admin API';
      expect(html).toContain(`The ${api} did not answer in time. Try again in a moment.`);
      // The configured deadline, not the 10 s default.
      expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
      expect(took).toBeLessThan(3_000);
      // An answer that never came is no refusal of the session.
      expect(res.headers.getSetCookie().some((c) => /^console_session=;/.test(c))).toBe(false);
    },
  );
});

describe('a proxy answering HTML instead of a problem document', () => {
  let gateway: Running;
  let console_: Awaited<ReturnType<typeof consoleOn>>;

  beforeAll(async () => {
    gateway = await proxyGateway();
    // The default deadline: under load the proxy's answer may take longer than the short one.
    console_ = await consoleOn(gateway.url, 10_000);
  });

  afterAll(async () => {
    await console_.close();
    await gateway.close();
  });

  it.each([
    ['tenant', TENANT_PAGE, 'the gateway'],
    ['operator', OPERATOR_PAGE, 'the admin API'],
  ] as const)('is a 502 problem page on a %s page, naming the status', async (role, path, api) => {
    const res = await fetch(`${console_.url}${path}`, {
      headers: { cookie: console_.cookie[role] },
      redirect: 'manual',
    });
    const html = await res.text();
    expect(res.status).toBe(502);
    expect(html).toContain(`${api} answered 502 without a problem document`);
    expect(html).not.toContain('<h1>502 Bad Gateway</h1>');
  });
});
