import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { SESSION_COOKIE } from '../src/http/cookies';
import { startConsole } from './support/console-under-test';
import { SessionStandIn } from './support/session-stand-in';

/**
 * A gateway that fails without a problem document, seen from the pages of both roles: the tenant's
 * (public API) and the operator's (admin API) go through the one fetch wrapper and the one
 * "answer -> problem" rule, so each failure reads the same on both. The console sessions themselves
 * answer (a stand-in on the same port): the failure is the page's own call.
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

const stand = new SessionStandIn('7f0c1a52-0000-4000-8000-000000000001');
const sessionRoutes = stand.routes();

/** The session calls answered by the stand-in; any other call goes to `fail`. */
function sessionsOr(fail: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const route = sessionRoutes[`${req.method} ${req.url?.split('?')[0]}`];
    return route ? route(req, res) : fail(req, res);
  };
}

/** A gateway that takes every page's call and never answers a byte. */
async function silentGateway(): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createHttpServer(sessionsOr(() => undefined));
  return { url: await listening(server, sockets), close: closing(server, sockets) };
}

/** A proxy in front of a gateway that is down: an HTML 502 for everything. */
async function proxyGateway(): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createHttpServer(
    sessionsOr((_req, res) => {
      res.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    }),
  );
  return { url: await listening(server, sockets), close: closing(server, sockets) };
}

/** A console on both APIs of `gatewayUrl`, with the deadline set by CONSOLE_GATEWAY_TIMEOUT_MS, and a cookie per role. */
async function consoleOn(gatewayUrl: string, deadlineMs = DEADLINE_MS) {
  const running = await startConsole(gatewayUrl, { CONSOLE_GATEWAY_TIMEOUT_MS: String(deadlineMs) });
  const cookie = {
    tenant: `${SESSION_COOKIE}=${stand.make('tenant_viewer')}`,
    operator: `${SESSION_COOKIE}=${stand.make('operator')}`,
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
