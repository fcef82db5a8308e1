import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_SECURITY_POLICY } from '../src/http/security-headers';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';

/**
 * The console's own HTTP behaviour, in-process, against a stand-in gateway on a local port (the
 * console's only peer; its real behaviour is the e2e browser tests'): headers, the CSRF check, the
 * session cookie, role guards and how gateway refusals are shown.
 */
const TENANT = '7f0c1a52-0000-4000-8000-000000000001';
const XSS = '<img src=x onerror=alert(1)>';

/** A JWT-shaped token (the console reads sub, iat and exp; the gateway alone verifies). */
function fakeJwt(sub: string, ttlSeconds: number, ageSeconds = 0): string {
  const iat = Math.floor(Date.now() / 1000) - ageSeconds;
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'EdDSA' })}.${part({ sub, iat, exp: iat + ttlSeconds })}.${randomBytes(16).toString('base64url')}`;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let gateway: Server;
let gatewayUrl: string;
let routes: Record<string, Handler>;
let console_: ConsoleUnderTest;
let base: string;
let issuedJwt: string;

function json(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  gateway = createServer((req, res) => {
    const route = routes[`${req.method} ${req.url?.split('?')[0]}`];
    if (route) return route(req, res);
    json(res, 404, { title: 'Not Found', status: 404, detail: 'no such thing' }, 'application/problem+json');
  });
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  console_ = await startConsole(gatewayUrl);
  base = console_.url;
});

beforeEach(() => {
  issuedJwt = fakeJwt(TENANT, 3600);
  routes = {
    'POST /api/v1/authenticate': (req, res) =>
      req.headers.authorization === 'Bearer itk_good'
        ? json(res, 200, { access_token: issuedJwt, token_type: 'Bearer', expires_in: 3600 })
        : json(
            res,
            401,
            { title: 'Unauthorized', status: 401, detail: `unknown token ${XSS}` },
            'application/problem+json',
          ),
  };
});

afterAll(async () => {
  gateway.closeAllConnections();
  await console_.close();
  await new Promise((r) => gateway.close(r));
});

function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

/** Logs in as the tenant: the session cookie (name=value). */
async function tenantCookie(): Promise<string> {
  const res = await post('/login/tenant', { token: 'itk_good' });
  expect(res.status).toBe(302);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('console_session='));
  return cookie!.split(';')[0];
}

describe('every answer', () => {
  it.each(['/login', '/nowhere', '/healthz'])('%s carries the CSP and the security headers', async (path) => {
    const res = await fetch(`${base}${path}`);
    await res.text();
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('script-src');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('pages link only the hashed stylesheet, served as CSS and cached', async () => {
    const html = await (await fetch(`${base}/login`)).text();
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(html)?.[1];
    expect(href).toMatch(/^\/static\/console-[0-9a-f]{10}\.css$/);
    expect(html).not.toMatch(/<script|style=/);
    const css = await fetch(`${base}${href}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toContain('immutable');
    expect(await css.text()).toContain('body');
  });
});

describe('tenant login', () => {
  it('sets the sealed session cookie HttpOnly, SameSite=Strict; the JWT is in no page', async () => {
    const res = await post('/login/tenant', { token: 'itk_good' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/tenant/charges');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('console_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toContain(issuedJwt);
    expect(cookie).not.toContain('itk_good');

    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) => json(res, 200, []);
    const page = await fetch(`${base}/tenant/charges`, { headers: { cookie: cookie.split(';')[0] } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(TENANT);
    expect(html).not.toContain(issuedJwt);
    expect(html).not.toContain(issuedJwt.split('.')[1]);
  });

  it('returns to the console page it was sent from, and to no other address', async () => {
    const after = async (next: string) =>
      (await post('/login/tenant', { token: 'itk_good', next })).headers.get('location');
    expect(await after('/tenant/callbacks?status=dead')).toBe('/tenant/callbacks?status=dead');
    expect(await after('//evil.example/tenant')).toBe('/tenant/charges');
    expect(await after('https://evil.example/')).toBe('/tenant/charges');
    expect(await after('/operator')).toBe('/tenant/charges');
    expect(await after('/tenant\\@evil.example')).toBe('/tenant/charges');
  });

  it("a refused token shows the gateway's detail, escaped, and sets no session", async () => {
    const res = await post('/login/tenant', { token: 'itk_bad' });
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toContain('unknown token &lt;img src=x onerror=alert(1)>');
    expect(html).not.toContain('<img');
    expect(res.headers.getSetCookie().some((c) => c.startsWith('console_session='))).toBe(false);
  });

  it('a tampered cookie is no session: the page sends the browser to log in, and the cookie is deleted', async () => {
    const cookie = await tenantCookie();
    const tampered = cookie.slice(0, -3) + (cookie.endsWith('AAA') ? 'BBB' : 'AAA');
    const res = await fetch(`${base}/tenant/charges`, { headers: { cookie: tampered }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcharges');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('console_session='))).toMatch(/Max-Age=0/);
  });

  it('a gateway 401 ends the session (a revoked token): back to the login page', async () => {
    const cookie = await tenantCookie();
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) =>
      json(res, 401, { title: 'Unauthorized', status: 401, detail: 'token revoked' }, 'application/problem+json');
    const res = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('console_session='))).toMatch(/Max-Age=0/);
  });

  it('renews a JWT close to its exp with /refresh-token, and keeps the session', async () => {
    issuedJwt = fakeJwt(TENANT, 3600, 3480); // 2 minutes left of an hour: within the refresh margin
    const cookie = await tenantCookie();
    const renewed = fakeJwt(TENANT, 3600);
    let refreshedWith = '';
    routes['POST /api/v1/refresh-token'] = (req, res) => {
      refreshedWith = req.headers.authorization ?? '';
      json(res, 200, { access_token: renewed, token_type: 'bearer', expires_in: 3600 });
    };
    let searchedWith = '';
    routes['POST /api/v1/accounts-receivable/search'] = (req, res) => {
      searchedWith = req.headers.authorization ?? '';
      json(res, 200, []);
    };
    const res = await fetch(`${base}/tenant/charges`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(refreshedWith).toBe(`Bearer ${issuedJwt}`);
    expect(searchedWith).toBe(`Bearer ${renewed}`);
    const cookieAfter = res.headers.getSetCookie().find((c) => c.startsWith('console_session='))!;
    expect(cookieAfter).toMatch(/Max-Age=3[56]\d\d/);
  });
});

describe('session end', () => {
  it('logout deletes the cookie and says so on the login page', async () => {
    const cookie = await tenantCookie();
    const res = await post('/logout', {}, { cookie });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login');
    const cookies = res.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith('console_session='))).toMatch(/^console_session=; .*Max-Age=0/);
    const flash = cookies.find((c) => c.startsWith('console_flash='))!.split(';')[0];
    const login = await (await fetch(`${base}/login`, { headers: { cookie: flash } })).text();
    expect(login).toContain('You are logged out.');
  });

  it('a JWT the gateway will not renew ends the session at its refresh', async () => {
    issuedJwt = fakeJwt(TENANT, 3600, 3480);
    const cookie = await tenantCookie();
    routes['POST /api/v1/refresh-token'] = (_req, res) =>
      json(res, 401, { title: 'Unauthorized', status: 401, detail: 'revoked' }, 'application/problem+json');
    const res = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcharges');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('console_session='))).toMatch(/Max-Age=0/);
  });
});

describe('guards', () => {
  it('a POST from another origin, or with no Origin at all, is refused before anything happens', async () => {
    let called = 0;
    routes['POST /api/v1/authenticate'] = (_req, res) => {
      called += 1;
      json(res, 200, {});
    };
    const foreign = await post('/login/tenant', { token: 'itk_good' }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const crossSite = await fetch(`${base}/login/tenant`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      body: 'token=itk_good',
    });
    expect(crossSite.status).toBe(403);
    const bare = await fetch(`${base}/login/tenant`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=itk_good',
    });
    expect(bare.status).toBe(403);
    const nullOrigin = await post('/login/tenant', { token: 'itk_good' }, { origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    expect(called).toBe(0);
  });

  it("takes Chromium's form POST under Referrer-Policy no-referrer: Origin null, Sec-Fetch-Site same-origin", async () => {
    const res = await post('/login/tenant', { token: 'itk_good' }, { origin: 'null', 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(302);
  });

  it("behind a TLS proxy, trusts the browser's Sec-Fetch-Site over an Origin it cannot compare", async () => {
    const proxied = await post(
      '/login/tenant',
      { token: 'itk_good' },
      { origin: 'https://console.example.com', 'sec-fetch-site': 'same-origin' },
    );
    expect(proxied.status).toBe(302);
    const sameSite = await post('/login/tenant', { token: 'itk_good' }, { 'sec-fetch-site': 'same-site' });
    expect(sameSite.status).toBe(403);
    // A browser without Sec-Fetch-Site: its Origin is the https address the proxy served, this host.
    const host = new URL(base).host;
    const httpsOrigin = await post('/login/tenant', { token: 'itk_good' }, { origin: `https://${host}` });
    expect(httpsOrigin.status).toBe(302);
    const otherHost = await post('/login/tenant', { token: 'itk_good' }, { origin: `https://evil.${host}` });
    expect(otherHost.status).toBe(403);
  });

  it('a tenant session gets 403 on operator pages; nobody is sent to log in', async () => {
    const cookie = await tenantCookie();
    const asTenant = await fetch(`${base}/operator`, { headers: { cookie }, redirect: 'manual' });
    expect(asTenant.status).toBe(403);
    expect(await asTenant.text()).toContain('operator pages');
    const anonymous = await fetch(`${base}/tenant/callbacks`, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcallbacks');
  });

  it('an operator credential is checked by the admin API before any session exists', async () => {
    routes['GET /admin/v1/audit'] = (req, res) =>
      req.headers.authorization === 'Bearer opk_goodgoodgood'
        ? json(res, 200, { items: [], next_cursor: null })
        : json(res, 401, { title: 'Unauthorized', status: 401, detail: 'revoked' }, 'application/problem+json');
    const refused = await post('/login/operator', { credential: 'opk_revokedrevoked' });
    expect(refused.status).toBe(401);
    expect(refused.headers.getSetCookie().some((c) => c.startsWith('console_session='))).toBe(false);
    const tenantToken = await post('/login/operator', { credential: 'itk_notanoperator' });
    expect(tenantToken.status).toBe(400);
    const accepted = await post('/login/operator', { credential: 'opk_goodgoodgood' });
    expect(accepted.status).toBe(302);
    const cookie = accepted.headers.getSetCookie().find((c) => c.startsWith('console_session='))!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict; Max-Age=(28799|28800)$/);
    const tenantPage = await fetch(`${base}/tenant/charges`, { headers: { cookie: cookie.split(';')[0] } });
    expect(tenantPage.status).toBe(403);
  });
});

describe('gateway refusals as pages', () => {
  it("another tenant's charge (the gateway's 404) is the not-found page; a malformed id never reaches it", async () => {
    const cookie = await tenantCookie();
    const res = await fetch(`${base}/tenant/charges/00000000-0000-4000-8000-00000000000a`, { headers: { cookie } });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('no such thing');
    const bad = await fetch(`${base}/tenant/charges/${encodeURIComponent('<x>')}`, { headers: { cookie } });
    expect(bad.status).toBe(404);
  });

  it("a bad filter is named before the gateway is asked; the gateway's 400 fields are listed", async () => {
    const cookie = await tenantCookie();
    const bad = await fetch(`${base}/tenant/charges?state=nope`, { headers: { cookie } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('state: uma destas: all, pending');
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) =>
      json(
        res,
        400,
        {
          title: 'Bad Request',
          status: 400,
          detail: 'invalid',
          errors: [{ in: 'body', path: '/end_date', message: XSS }],
        },
        'application/problem+json',
      );
    const refused = await fetch(`${base}/tenant/charges?from=2026-01-01&to=2026-01-02`, { headers: { cookie } });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain('/end_date');
    expect(html).not.toContain('<img');
  });

  it('a booklet download takes only a booklet link, and asks GATEWAY_URL for it whatever host the link names', async () => {
    const cookie = await tenantCookie();
    let asked = '';
    routes['GET /api/v1/bank-slip-booklet/downloads/bk_1'] = (req, res) => {
      asked = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.7 fake');
    };
    const download = (link: string) =>
      fetch(`${base}/tenant/booklets/download?${new URLSearchParams({ link })}`, { headers: { cookie } });
    for (const link of ['http://169.254.169.254/latest/meta-data', `${gatewayUrl}/api/v1/callbacks`, 'not a url'])
      expect({ link, status: (await download(link)).status }).toEqual({ link, status: 400 });
    const pdf = await download(
      'http://elsewhere.example/api/v1/bank-slip-booklet/downloads/bk_1?expires=9&signature=s&x=1',
    );
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-disposition')).toBe('attachment; filename="booklet-bk_1.pdf"');
    expect(await pdf.text()).toBe('%PDF-1.7 fake');
    expect(asked).toBe('/api/v1/bank-slip-booklet/downloads/bk_1?expires=9&signature=s');
  });

  it("downloads a booklet by the tenant's own booklet.sent event; an event of another kind has no PDF", async () => {
    const cookie = await tenantCookie();
    routes['GET /api/v1/bank-slip-booklet/downloads/bk_2'] = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.7 two');
    };
    const event = (id: string, type: string, payload: object) => ({
      event_id: id,
      event_type: type,
      url: 'https://erp.example.com/cb',
      status: 'delivered',
      created_at: '2026-11-26T09:00:00Z',
      delivered_at: '2026-11-26T09:00:01Z',
      attempts: [],
      payload,
    });
    routes['GET /api/v1/callbacks/evt_booklet_2'] = (_req, res) =>
      json(
        res,
        200,
        event('evt_booklet_2', 'booklet.sent', {
          type: 'sent',
          download: 'https://gw.example/api/v1/bank-slip-booklet/downloads/bk_2?expires=9&signature=s',
        }),
      );
    routes['GET /api/v1/callbacks/evt_paid_1'] = (_req, res) =>
      json(res, 200, event('evt_paid_1', 'receivable.paid', { type: 'paid', download: 'x' }));
    const pdf = await fetch(`${base}/tenant/booklets/download?event=evt_booklet_2`, { headers: { cookie } });
    expect(pdf.status).toBe(200);
    expect(await pdf.text()).toBe('%PDF-1.7 two');
    const page = await (await fetch(`${base}/tenant/callbacks/evt_booklet_2`, { headers: { cookie } })).text();
    expect(page).toContain('href="/tenant/booklets/download?event=evt_booklet_2"');
    expect((await fetch(`${base}/tenant/booklets/download?event=evt_paid_1`, { headers: { cookie } })).status).toBe(
      404,
    );
    expect((await fetch(`${base}/tenant/booklets/download?event=evt_other`, { headers: { cookie } })).status).toBe(404);
  });

  it('a gateway out of reach is a 502 page', async () => {
    const cookie = await tenantCookie();
    const saved = routes;
    routes = {
      ...saved,
      'GET /api/v1/callbacks': (req) => req.socket.destroy(),
    };
    const res = await fetch(`${base}/tenant/callbacks`, { headers: { cookie } });
    expect(res.status).toBe(502);
    expect(await res.text()).toContain('O gateway não respondeu');
  });
});
