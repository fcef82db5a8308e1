import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_SECURITY_POLICY } from '../src/http/security-headers';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';
import { SessionStandIn } from './support/session-stand-in';

/**
 * The console's own HTTP behaviour, in-process, against a stand-in gateway on a local port (the
 * console's only peer; its real behaviour is the e2e browser tests'): headers, the CSRF check, the
 * session cookie that names a gateway session, role guards and how gateway refusals are shown.
 */
const TENANT = '7f0c1a52-0000-4000-8000-000000000001';
const XSS = '<img src=x onerror=alert(1)>';
const INVITATION = `inv_${'a'.repeat(43)}`;
const USER = '5e0c1a52-0000-4000-8000-0000000000aa';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let gateway: Server;
let gatewayUrl: string;
let routes: Record<string, Handler>;
let stand: SessionStandIn;
let console_: ConsoleUnderTest;
let base: string;

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
  stand = new SessionStandIn(TENANT);
  routes = { ...stand.routes() };
});

afterAll(async () => {
  gateway.closeAllConnections();
  await console_.close();
  await new Promise((r) => gateway.close(r));
});

function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}, at = base) {
  return fetch(`${at}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: at, ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

function sessionCookieOf(res: Response, name = 'console_session'): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
}

/** Logs in as the tenant (admin) with the development token form: the session cookie (name=value). */
async function tenantCookie(): Promise<string> {
  const res = await post('/login/tenant', { token: 'itk_good' });
  expect(res.status).toBe(302);
  return (sessionCookieOf(res) ?? '').split(';')[0] ?? '';
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

describe('sign-in and the session cookie', () => {
  it('the cookie holds only the gateway session id, HttpOnly, SameSite=Lax; the JWT is in no page', async () => {
    const res = await post('/login/tenant', { token: 'itk_good' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/tenant/charges');
    const cookie = sessionCookieOf(res) ?? '';
    expect(cookie).toMatch(/^console_session=ses_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(cookie).not.toContain('itk_good');

    let searchedWith = '';
    routes['POST /api/v1/accounts-receivable/search'] = (req, res) => {
      searchedWith = req.headers.authorization ?? '';
      json(res, 200, []);
    };
    const page = await fetch(`${base}/tenant/charges`, { headers: { cookie: cookie.split(';')[0] ?? '' } });
    const html = await page.text();
    expect(page.status).toBe(200);
    // The JWT the gateway minted with this lookup of the session, and nowhere on the page.
    expect(searchedWith).toBe(`Bearer ${stand.lastJwt}`);
    expect(html).not.toContain(stand.lastJwt.split('.')[1]);
  });

  it('tells the gateway the user’s address and a request id with every session call', async () => {
    const cookie = await tenantCookie();
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) => json(res, 200, []);
    await (await fetch(`${base}/tenant/charges`, { headers: { cookie } })).text();
    expect(stand.calls.length).toBe(2);
    for (const call of stand.calls) {
      expect(call.forwardedFor).toMatch(/127\.0\.0\.1$/);
      expect(call.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(stand.calls[0]?.requestId).not.toBe(stand.calls[1]?.requestId);
    expect(stand.calls[1]?.authorization).toBe(`Session ${cookie.split('=')[1]}`);
  });

  it('signs a person in with e-mail, password and code; a refusal keeps the e-mail, escaped, and no cookie', async () => {
    const refused = await post('/login', {
      email: 'ana@example.com',
      password: 'correct horse battery',
      totp: '654321',
    });
    expect(refused.status).toBe(401);
    const html = await refused.text();
    expect(html).toContain('value="ana@example.com"');
    expect(html).toContain('&lt;b>x&lt;/b>');
    expect(html).not.toContain('correct horse battery');
    expect(sessionCookieOf(refused)).toBeUndefined();
    const badCode = await post('/login', { email: 'ana@example.com', password: 'x', totp: '12' });
    expect(badCode.status).toBe(400);
    expect(stand.calls.length).toBe(1);

    const accepted = await post('/login', {
      email: 'ana@example.com',
      password: 'correct horse battery',
      totp: '123456',
      next: '/tenant/callbacks',
    });
    expect(accepted.status).toBe(302);
    expect(accepted.headers.get('location')).toBe('/tenant/callbacks');
    expect(sessionCookieOf(accepted)).toMatch(/^console_session=ses_/);
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

  it('a cookie that is no session id is deleted without asking the gateway', async () => {
    const res = await fetch(`${base}/tenant/charges`, {
      headers: { cookie: `console_session=${XSS}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcharges');
    expect(sessionCookieOf(res)).toMatch(/Max-Age=0/);
    expect(stand.calls).toEqual([]);
  });

  it('only the gateway’s 401 ends a session: a 429, a 503, no answer or a useless one is an error page that keeps it', async () => {
    const cookie = await tenantCookie();
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) => json(res, 200, []);
    const answers: Handler[] = [
      (_req, res) => {
        res.setHeader('retry-after', '30');
        json(res, 429, { title: 'Too Many Requests', status: 429, detail: 'slow down' }, 'application/problem+json');
      },
      (_req, res) => json(res, 503, { title: 'Unavailable', status: 503, detail: 'busy' }, 'application/problem+json'),
      (req) => req.socket.destroy(),
      // A tenant session without its JWT: unusable, but no end.
      (_req, res) => json(res, 200, { ...stand.sessions.get(cookie.split('=')[1] ?? '') }),
    ];
    for (const answer of answers) {
      stand.currentOverride = answer;
      const res = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
      await res.text();
      expect([429, 502]).toContain(res.status);
      expect(sessionCookieOf(res)).toBeUndefined();
    }
    stand.currentOverride = undefined;
    expect((await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
    stand.ended.add(cookie.split('=')[1] ?? '');
    const ended = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
    expect(ended.status).toBe(302);
    expect(ended.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcharges');
    expect(sessionCookieOf(ended)).toMatch(/Max-Age=0/);
    // The login page it is sent to says why.
    expect(ended.headers.getSetCookie().some((c) => c.startsWith('console_flash='))).toBe(true);
  });

  it('a public API 401 ends the session: back to the login page', async () => {
    const cookie = await tenantCookie();
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) =>
      json(res, 401, { title: 'Unauthorized', status: 401, detail: 'token revoked' }, 'application/problem+json');
    const res = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login');
    expect(sessionCookieOf(res)).toMatch(/Max-Age=0/);
  });
});

describe('session end', () => {
  it('logout ends the session on the gateway: the same cookie then opens nothing', async () => {
    const cookie = await tenantCookie();
    const res = await post('/logout', {}, { cookie });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login');
    expect(stand.ended.has(cookie.split('=')[1] ?? '')).toBe(true);
    const cookies = res.headers.getSetCookie();
    expect(sessionCookieOf(res)).toMatch(/^console_session=; .*Max-Age=0/);
    const flash = (cookies.find((c) => c.startsWith('console_flash=')) ?? '').split(';')[0] ?? '';
    const login = await (await fetch(`${base}/login`, { headers: { cookie: flash } })).text();
    expect(login).toContain('Você saiu');

    const replayed = await fetch(`${base}/tenant/charges`, { headers: { cookie }, redirect: 'manual' });
    expect(replayed.status).toBe(302);
    expect(replayed.headers.get('location')).toBe('/login?next=%2Ftenant%2Fcharges');
  });

  it('a logout the gateway does not answer keeps the cookie, to try again', async () => {
    const cookie = await tenantCookie();
    routes['POST /admin/v1/sessions/current/sign-out'] = (req) => req.socket.destroy();
    const res = await post('/logout', {}, { cookie });
    expect(res.status).toBe(502);
    expect(sessionCookieOf(res)).toBeUndefined();
  });
});

describe('guards', () => {
  it('a POST from another origin, or with no Origin at all, is refused before anything happens', async () => {
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
    expect(stand.calls).toEqual([]);
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

  it('an operator signs in with the credential in development; the cookie holds the session id, never the credential', async () => {
    const refused = await post('/login/operator', { credential: 'opk_revokedrevoked' });
    expect(refused.status).toBe(401);
    expect(sessionCookieOf(refused)).toBeUndefined();
    const tenantToken = await post('/login/operator', { credential: 'itk_notanoperator' });
    expect(tenantToken.status).toBe(400);
    const accepted = await post('/login/operator', { credential: 'opk_good_operator' });
    expect(accepted.status).toBe(302);
    const cookie = sessionCookieOf(accepted) ?? '';
    expect(cookie).toMatch(/^console_session=ses_[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=(28799|28800)$/);
    expect(cookie).not.toContain('opk_');
    let adminAuth = '';
    routes['GET /admin/v1/audit'] = (req, res) => {
      adminAuth = req.headers.authorization ?? '';
      json(res, 200, { items: [], next_cursor: null });
    };
    const id = cookie.split(';')[0]?.split('=')[1] ?? '';
    await (await fetch(`${base}/operator/audit`, { headers: { cookie: `console_session=${id}` } })).text();
    expect(adminAuth).toBe(`Session ${id}`);
    const tenantPage = await fetch(`${base}/tenant/charges`, { headers: { cookie: `console_session=${id}` } });
    expect(tenantPage.status).toBe(403);
  });

  it('a tenant viewer may not manage users; a tenant admin lists, invites (the link shown once) and revokes', async () => {
    const viewer = await post('/login', {
      email: 'ana@example.com',
      password: 'correct horse battery',
      totp: '123456',
    });
    const viewerCookie = (sessionCookieOf(viewer) ?? '').split(';')[0] ?? '';
    expect((await fetch(`${base}/tenant/users`, { headers: { cookie: viewerCookie } })).status).toBe(403);
    // A viewer reads: the charges page opens, a retry or a booklet request is refused before the gateway.
    routes['POST /api/v1/accounts-receivable/search'] = (_req, res) => json(res, 200, []);
    expect((await fetch(`${base}/tenant/charges`, { headers: { cookie: viewerCookie } })).status).toBe(200);
    const asked: string[] = [];
    routes['POST /api/v1/bank-slip-booklet/' + TENANT] = (req, res) => {
      asked.push(req.url ?? '');
      json(res, 202, {});
    };
    for (const [path, form] of [
      ['/tenant/booklets', { payment_slip_id: TENANT, url_callback: 'https://erp.example.com/cb' }],
      ['/tenant/callbacks/evt_x/retry', {}],
    ] as const) {
      const refused = await post(path, form, { cookie: viewerCookie });
      expect(refused.status).toBe(403);
    }
    expect(asked).toEqual([]);

    const cookie = await tenantCookie();
    routes[`GET /admin/v1/tenants/${TENANT}/users`] = (_req, res) =>
      json(res, 200, {
        items: [
          {
            user_id: USER,
            email: 'bia@example.com',
            name: XSS,
            role: 'tenant_admin',
            created_at: '2026-11-20T12:00:00Z',
            revoked_at: null,
            last_sign_in_at: null,
          },
        ],
      });
    const list = await fetch(`${base}/tenant/users`, { headers: { cookie } });
    const html = await list.text();
    expect(list.status).toBe(200);
    expect(html).toContain('bia@example.com');
    expect(html).not.toContain('<img');
    expect(html).toContain(`action="/tenant/users/${USER}/revoke"`);

    let invited: unknown;
    routes[`POST /admin/v1/tenants/${TENANT}/invitations`] = async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      invited = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      json(res, 201, {
        invitation_id: USER,
        email: 'caio@example.com',
        role: 'tenant_viewer',
        tenant_id: TENANT,
        invitation_token: INVITATION,
        expires_at: '2026-12-01T12:00:00Z',
      });
    };
    const answer = await post('/tenant/users/invite', { email: 'caio@example.com', role: 'tenant_viewer' }, { cookie });
    expect(answer.status).toBe(201);
    expect(invited).toEqual({ email: 'caio@example.com', role: 'tenant_viewer' });
    expect(await answer.text()).toContain(`${base}/invitations/${INVITATION}`);

    let revoked = false;
    routes[`POST /admin/v1/users/${USER}/revoke`] = (_req, res) => {
      revoked = true;
      json(res, 200, { user_id: USER, revoked: true });
    };
    const revoke = await post(`/tenant/users/${USER}/revoke`, {}, { cookie });
    expect(revoke.status).toBe(302);
    expect(revoked).toBe(true);
  });
});

describe('the operator’s users', () => {
  it('lists operators and links each tenant’s users; invites an operator and a tenant user, each link shown once', async () => {
    const signedIn = await post('/login/operator', { credential: 'opk_good_operator' });
    const cookie = (sessionCookieOf(signedIn) ?? '').split(';')[0] ?? '';
    const user = (role: string) => ({
      user_id: USER,
      email: `${role}@example.com`,
      name: 'Op',
      role,
      created_at: '2026-11-20T12:00:00Z',
      revoked_at: '2026-11-21T12:00:00Z',
      last_sign_in_at: null,
    });
    routes['GET /admin/v1/operators/users'] = (_req, res) => json(res, 200, { items: [user('operator')] });
    routes['GET /admin/v1/tenants'] = (_req, res) =>
      json(res, 200, {
        items: [
          {
            tenant_id: TENANT,
            name: XSS,
            status: 'active',
            created_at: '2026-11-20T12:00:00Z',
            active_tokens: 1,
            previous_secret_valid_until: null,
          },
        ],
      });
    const list = await fetch(`${base}/operator/users`, { headers: { cookie } });
    const html = await list.text();
    expect(list.status).toBe(200);
    expect(html).toContain('operator@example.com');
    // Revoked already: no revoke button.
    expect(html).not.toContain(`/operator/users/${USER}/revoke`);
    expect(html).toContain(`href="/operator/tenants/${TENANT}/users"`);
    expect(html).not.toContain('<img');

    const bodies: unknown[] = [];
    const invitation = (role: string, tenantId: string | null) => async (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      json(res, 201, {
        invitation_id: USER,
        email: 'new@example.com',
        role,
        tenant_id: tenantId,
        invitation_token: INVITATION,
        expires_at: '2026-12-01T12:00:00Z',
      });
    };
    routes['POST /admin/v1/operator-invitations'] = invitation('operator', null);
    routes[`POST /admin/v1/tenants/${TENANT}/invitations`] = invitation('tenant_admin', TENANT);
    const op = await post('/operator/users/invite', { email: 'new@example.com' }, { cookie });
    expect(op.status).toBe(201);
    expect(await op.text()).toContain(`/invitations/${INVITATION}`);
    const badRole = await post(
      `/operator/tenants/${TENANT}/users/invite`,
      { email: 'new@example.com', role: 'operator' },
      { cookie },
    );
    expect(badRole.status).toBe(400);
    const tenantUser = await post(
      `/operator/tenants/${TENANT}/users/invite`,
      { email: 'new@example.com', role: 'tenant_admin' },
      { cookie },
    );
    expect(tenantUser.status).toBe(201);
    expect(bodies).toEqual([{ email: 'new@example.com' }, { email: 'new@example.com', role: 'tenant_admin' }]);
    // Every call as this operator's session.
    expect(stand.calls.filter((c) => c.path.startsWith('/admin/v1/sessions/current')).length).toBeGreaterThan(0);
  });
});

describe('an invitation', () => {
  const view = {
    email: 'caio@example.com',
    role: 'tenant_viewer',
    tenant_name: XSS,
    totp_secret: 'JBSWY3DPEHPK3PXP',
    otpauth_uri:
      'otpauth://totp/Payments%20console:caio%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Payments%20console',
    expires_at: '2026-12-01T12:00:00Z',
  };

  it('shows the TOTP secret and its QR code as an image the CSP allows, with no session', async () => {
    routes[`GET /admin/v1/invitations/${INVITATION}`] = (_req, res) => json(res, 200, view);
    const res = await fetch(`${base}/invitations/${INVITATION}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain('JBSWY3DPEHPK3PXP');
    expect(html).toMatch(/<img id="totp-qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)>');
    expect(html).toContain('name="password"');
    const unknown = await fetch(`${base}/invitations/inv_nope`);
    expect(unknown.status).toBe(404);
  });

  it('a wrong code is the same page naming the field; a good one sends the new user to sign in', async () => {
    routes[`GET /admin/v1/invitations/${INVITATION}`] = (_req, res) => json(res, 200, view);
    routes[`POST /admin/v1/invitations/${INVITATION}/accept`] = async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { totp: string };
      if (body.totp !== '123456')
        return json(
          res,
          422,
          {
            title: 'Unprocessable',
            status: 422,
            detail: 'check',
            errors: [{ in: 'body', path: '/totp', message: 'wrong code' }],
          },
          'application/problem+json',
        );
      json(res, 201, { user_id: USER, email: 'caio@example.com', role: 'tenant_viewer', tenant_id: TENANT });
    };
    const form = { name: 'Caio', password: 'a long enough password', totp: '000000' };
    const wrong = await post(`/invitations/${INVITATION}`, form);
    expect(wrong.status).toBe(422);
    const html = await wrong.text();
    expect(html).toContain('totp: wrong code');
    expect(html).toContain('value="Caio"');
    const right = await post(`/invitations/${INVITATION}`, { ...form, totp: '123456' });
    expect(right.status).toBe(302);
    expect(right.headers.get('location')).toBe('/login');
  });
});

describe('in production', () => {
  let prod: ConsoleUnderTest;

  beforeAll(async () => {
    prod = await startConsole(gatewayUrl, { NODE_ENV: 'production' });
  });

  afterAll(() => prod.close());

  it('offers only the e-mail form and a Secure __Host- cookie', async () => {
    const login = await (await fetch(`${prod.url}/login`)).text();
    expect(login).toContain('name="totp"');
    expect(login).not.toContain('name="token"');
    expect(login).not.toContain('name="credential"');
    expect((await post('/login/tenant', { token: 'itk_good' }, {}, prod.url)).status).toBe(404);
    const res = await post(
      '/login',
      { email: 'ana@example.com', password: 'correct horse battery', totp: '123456' },
      {},
      prod.url,
    );
    expect(res.status).toBe(302);
    expect(sessionCookieOf(res, '__Host-console_session')).toMatch(
      /^__Host-console_session=ses_[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/,
    );
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
