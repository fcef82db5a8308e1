import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { BuiltConsole, PRODUCTION_SESSION_COOKIE as COOKIE, totp } from '../support/built-console';
import { describeWithBrowser, launchBrowser, open, screenshot, submit, watchedPage } from '../support/browser';
import { freePort, startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * A person's way into the console, in Chromium, against the built console in production mode (plain
 * `node dist/apps/console/main.js`, NODE_ENV=production) over a started system: an operator invites
 * a tenant admin through the admin API; the invitation page shows the TOTP secret and its QR code;
 * the person accepts it with a name, a password and a code from an authenticator (here an RFC 6238
 * few-liner of this test, independent of the gateway's library); signs in with e-mail, password and
 * code; a tenant page opens; signing out ends the session on the server, so the copied cookie opens
 * nothing afterwards.
 */

const TENANT_PAGE = '/tenant/users';
const PASSWORD = `a long passphrase ${randomBytes(4).toString('hex')}`;

describeWithBrowser('people sign in to the built console in production mode', () => {
  let system: TestSystem;
  let tenant: TestTenant;
  let console_: BuiltConsole;
  let browser: Browser;
  let page: Page;
  let dialogs: string[] = [];
  let consoleErrors: string[] = [];
  let operatorCredential: string;
  const email = `ana.${randomBytes(3).toString('hex')}@example.com`;
  let invitationToken = '';
  let totpSecret = '';
  let copiedSession = '';

  beforeAll(async () => {
    system = await startSystem();
    const adminDb = await openAdminDatabase(system.databaseUrl);
    try {
      operatorCredential = (await createOperator(adminDb, 'Sign-in Ops', { operator: 'test' })).credential;
    } finally {
      await adminDb.destroy();
    }
    tenant = await system.newTenant('Padaria Sign-in');
    console_ = new BuiltConsole(await freePort());
    await console_.start({
      GATEWAY_URL: system.gateway.url,
      GATEWAY_ADMIN_URL: system.gateway.adminUrl,
      CONSOLE_SESSION_KEY: randomBytes(32).toString('base64'),
    });
    browser = await launchBrowser();
    ({ page, dialogs, consoleErrors } = await watchedPage(browser));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await console_?.stop();
    await system?.stop();
  });

  afterEach(() => {
    expect(dialogs).toEqual([]);
    // A CSP violation (the QR image refused, say) is a console error.
    expect(consoleErrors).toEqual([]);
  });

  it('an operator invites a tenant admin through the admin API', async () => {
    const res = await fetch(`${system.gateway.adminUrl}/admin/v1/tenants/${tenant.tenantId}/invitations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorCredential}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, role: 'tenant_admin' }),
    });
    expect(res.status).toBe(201);
    const invitation = (await res.json()) as { invitation_token: string; email: string };
    expect(invitation.email).toBe(email);
    invitationToken = invitation.invitation_token;
  });

  it('the invitation page shows the TOTP secret and a QR code the CSP lets through', async () => {
    const res = await open(page, `${console_.url}/invitations/${invitationToken}`);
    expect(res.status()).toBe(200);
    totpSecret = (await page.$eval('#totp-secret', (el) => el.textContent ?? '')).trim();
    expect(totpSecret).toMatch(/^[A-Z2-7]{16,}=*$/);
    expect(await page.$eval('#invitation-for', (el) => el.textContent ?? '')).toContain(email);
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#totp-qr');
      return img !== null && img.complete && img.naturalWidth > 0;
    });
    await screenshot(page, 'invitation');
  });

  it('accepting it with name, password and a code leads to the sign-in page', async () => {
    await page.type('#accept-invitation input[name=name]', 'Ana Souza');
    await page.type('#accept-invitation input[name=password]', PASSWORD);
    await page.type('#accept-invitation input[name=totp]', totp(totpSecret));
    const landed = await submit(page, '#accept-invitation button[type=submit]');
    expect(landed.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.content()).toContain(email);
    // Used once: the link opens nothing now.
    expect((await fetch(`${console_.url}/invitations/${invitationToken}`)).status).toBe(404);
  });

  it('in production the sign-in page offers only e-mail, password and code', async () => {
    expect(await page.$('input[name=token]')).toBeNull();
    expect(await page.$('input[name=credential]')).toBeNull();
    expect(await page.$('#password-login input[name=totp]')).not.toBeNull();
    await screenshot(page, 'sign-in');
  });

  it('signs in with e-mail, password and a TOTP code; a tenant page opens', async () => {
    // The tenant's users: a page of the gateway alone (this system runs no charge services).
    await open(page, `${console_.url}/login?next=${encodeURIComponent(TENANT_PAGE)}`);
    // A code from far outside the accepted window: refused on the form, no session.
    await page.type('#password-login input[name=email]', email);
    await page.type('#password-login input[name=password]', PASSWORD);
    await page.type('#password-login input[name=totp]', totp(totpSecret, 10));
    const refused = await submit(page, '#password-login button[type=submit]');
    expect(refused.status()).toBe(401);
    expect(consoleErrors.splice(0)).toEqual([expect.stringContaining('status of 401')]);
    expect(await page.$('#password-login .flash.error')).not.toBeNull();
    expect((await browser.defaultBrowserContext().cookies()).some((c) => c.name === COOKIE)).toBe(false);
    await page.$eval('#password-login input[name=email]', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#password-login input[name=email]', email);
    await page.type('#password-login input[name=password]', PASSWORD);
    // The next step's code: the one that accepted the invitation is spent, and ±1 step is accepted.
    await page.type('#password-login input[name=totp]', totp(totpSecret, 1));
    const landed = await submit(page, '#password-login button[type=submit]');
    expect(landed.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe(TENANT_PAGE);
    expect(await page.$eval('#users', (el) => el.textContent ?? '')).toContain(email);
    await screenshot(page, 'tenant-users');

    const cookies = await browser.defaultBrowserContext().cookies();
    const session = cookies.find((c) => c.name === COOKIE);
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(session?.value).toMatch(/^ses_[A-Za-z0-9_-]{43}$/);
    copiedSession = session?.value ?? '';
    expect(await page.content()).not.toContain(copiedSession);
  });

  it('signing out ends the session on the server: the copied cookie then opens nothing', async () => {
    // The copy works while the session lives.
    const before = await fetch(`${console_.url}${TENANT_PAGE}`, {
      headers: { cookie: `${COOKIE}=${copiedSession}` },
      redirect: 'manual',
    });
    await before.text();
    expect(before.status).toBe(200);

    const out = await submit(page, 'form[action="/logout"] button[type=submit]');
    expect(out.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/login');

    const replayed = await fetch(`${console_.url}${TENANT_PAGE}`, {
      headers: { cookie: `${COOKIE}=${copiedSession}` },
      redirect: 'manual',
    });
    expect(replayed.status).toBe(302);
    expect(replayed.headers.get('location')).toMatch(/^\/login/);

    // And in a browser that had never seen it: put back by hand, it opens the login page.
    const other = await browser.createBrowserContext();
    try {
      await other.setCookie({ name: COOKIE, value: copiedSession, domain: '127.0.0.1', path: '/', secure: true });
      const fresh = await other.newPage();
      await open(fresh, `${console_.url}${TENANT_PAGE}`);
      expect(new URL(fresh.url()).pathname).toBe('/login');
    } finally {
      await other.close();
    }
  });
});
