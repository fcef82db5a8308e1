import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { loadConsoleConfig, startConsole, type RunningConsole } from '@payments/console';
import type { CallbackEventSummary, CallbackEventView } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import {
  describeWithBrowser,
  follow,
  launchBrowser,
  open,
  screenshot,
  submit,
  textOf,
  watchedPage,
} from '../support/browser';
import { download } from '../support/download';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/**
 * The tenant's console in Chromium, against the whole system: log in with the integration token,
 * find a charge, open its failing callback, see the attempts, retry it and see it delivered; another
 * tenant's session sees none of it; attacker text (a payer's name, the receiver's answer) stays text
 * under the CSP.
 */
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '150,150,150',
  CALLBACK_RETRY_JITTER_PERCENT: '0',
  CALLBACK_TIMEOUT_MS: '1000',
  CALLBACK_POLL_INTERVAL_MS: '50',
  PROVIDER_RETRIES: '0',
};
const XSS = '<img src=x onerror=alert(1)>';
/** Any JWT (header.payload of base64url JSON objects): none may appear in a page. */
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}/;

let system: TestSystem;
let console_: RunningConsole;
let browser: Browser;
let receiver: CallbackReceiver;
let receiverFails = true;
let tenantA: TestTenant;
let tenantB: TestTenant;
let chargeId: string;
let paymentSlipId: string;
let eventId: string;
/** Tenant A's second charge's callback, left dead by the isolation test (for the replay). */
let victimEvent = '';

async function eventOf(tenant: TestTenant, id: string): Promise<CallbackEventView> {
  const res = await tenant.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${id}`);
  expect(res.status).toBe(200);
  return res.json;
}

/** Logs `tenant` in through the login form of a fresh browser context: its page. */
async function loggedIn(tenant: TestTenant) {
  const context = await browser.createBrowserContext();
  const watched = await watchedPage(context);
  await open(watched.page, `${console_.url}/login`);
  await screenshot(watched.page, 'login');
  await watched.page.type('#tenant-login input[name=token]', tenant.integrationToken);
  const landed = await submit(watched.page, '#tenant-login button[type=submit]');
  expect(landed.status()).toBe(200);
  expect(new URL(watched.page.url()).pathname).toBe('/tenant/charges');
  return { ...watched, context };
}

/** No element made of attacker text, and the text itself visible. */
async function expectTextNotMarkup(page: Page, selector: string): Promise<void> {
  expect(await page.$$eval('img', (imgs) => imgs.length)).toBe(0);
  expect(await textOf(page, selector)).toContain(XSS);
}

describeWithBrowser('the tenant console in Chromium', () => {
  beforeAll(async () => {
    system = await startSystem({ withReceivables: true, withBooklets: true, env: FAST });
    // Failing, the receiver answers markup: the attempt's response_excerpt the tenant pages show.
    receiver = await new CallbackReceiver(() =>
      receiverFails ? { status: 500, headers: { 'content-type': 'text/html' }, body: XSS } : { status: 204 },
    ).start();
    console_ = await startConsole(
      loadConsoleConfig({
        NODE_ENV: 'development',
        CONSOLE_PORT: '0',
        GATEWAY_URL: system.gateway.url,
        GATEWAY_ADMIN_URL: system.gateway.adminUrl,
        CONSOLE_SESSION_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
      }),
      createLogger('console', 'silent'),
    );
    [tenantA, tenantB] = await Promise.all([system.newTenant('Tenant A'), system.newTenant('Tenant B')]);

    // Tenant A: a payer whose name is markup, and a charge whose callbacks go to a failing receiver.
    const client = clientPayload({ name: XSS });
    expect((await tenantA.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    // Today as the console's default span counts it: the Brasília calendar.
    const today = brasiliaDate();
    const charge = receivablePayload(client.client_id, receiver.url, { emission_date: today, due_date: '2099-12-15' });
    chargeId = charge.account_receivable_id;
    paymentSlipId = charge.payment_slip_id;
    expect((await tenantA.api.postIdempotent('/api/v1/accounts-receivable', [charge])).status).toBe(202);
    await waitFor(
      async () => {
        const res = await tenantA.api.send<CallbackEventSummary[]>('GET', '/api/v1/callbacks?status=dead');
        eventId = res.json?.[0]?.event_id ?? '';
        return eventId !== '';
      },
      30_000,
      'the registered callback to die at the failing receiver',
    );
    browser = await launchBrowser();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await console_?.stop();
    await receiver?.stop();
    await system?.stop();
  });

  it('logs in, finds the charge, opens its failing callback, retries it and sees it delivered', async () => {
    const { page, dialogs, consoleErrors, context } = await loggedIn(tenantA);
    try {
      await screenshot(page, 'tenant-charges');

      // Search: pending charges emitted in the default span (the last 30 days).
      await page.select('#charge-search select[name=state]', 'pending');
      const found = await submit(page, '#charge-search button[type=submit]');
      expect(found.status()).toBe(200);
      expect(new URL(page.url()).searchParams.get('state')).toBe('pending');
      const row = `#charges tr[data-charge="${chargeId}"]`;
      expect(await page.$(row)).not.toBeNull();
      await expectTextNotMarkup(page, `${row} td.payer`);

      // The charge: payment data, its state history, its callbacks.
      await follow(page, `${row} a`);
      expect(new URL(page.url()).pathname).toBe(`/tenant/charges/${chargeId}`);
      await expectTextNotMarkup(page, '#payer-name');
      expect(await textOf(page, 'dl.facts')).toContain('R$');
      expect(await textOf(page, '#history')).toMatch(/Pendente/);
      const eventRow = `#charge-callbacks tr[data-event="${eventId}"]`;
      expect(await textOf(page, eventRow)).toMatch(/receivable\.registered[\s\S]*esgotado/);
      await screenshot(page, 'tenant-charge');

      // The failing callback: every attempt with its status code, error and duration.
      await follow(page, `${eventRow} a`);
      expect(new URL(page.url()).pathname).toBe(`/tenant/callbacks/${eventId}`);
      const attempts = await page.$$eval('#attempts tbody tr', (rows) =>
        rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.innerText.trim())),
      );
      expect(attempts).toHaveLength(4); // the first attempt and 3 retries
      for (const [, , status, error, duration, response] of attempts) {
        expect(status).toBe('500');
        expect(error).toBe('HTTP 500');
        expect(duration).toMatch(/^\d+ ms$|^\d+,\d s$/);
        expect(response).toBe(XSS);
      }
      // The receiver's answer is text in its own <pre>, under the CSP: no element made of it, no dialog.
      expect(await page.$$eval('#attempts td.response pre', (pres) => pres.map((p) => p.textContent))).toEqual(
        Array(4).fill(XSS),
      );
      await expectTextNotMarkup(page, '#attempts td.response');
      expect(await page.$$('#attempts td.response *:not(pre)')).toHaveLength(0);
      expect(dialogs).toEqual([]);
      expect((await eventOf(tenantA, eventId)).attempts.map((a) => a.response_excerpt)).toEqual(Array(4).fill(XSS));
      await screenshot(page, 'tenant-callback-dead');

      // The receiver mended: retry, then the page shows it delivered.
      receiverFails = false;
      await submit(page, '#retry button');
      expect(await textOf(page, '.flash.info')).toContain('Na fila de entrega de novo');
      await waitFor(
        async () => {
          await page.reload({ waitUntil: 'domcontentloaded' });
          return (await textOf(page, 'dl.facts')).includes('entregue');
        },
        15_000,
        'the page to show the event delivered',
      );
      expect(await page.$('#retry')).toBeNull();
      const last = await page.$$eval('#attempts tbody tr:last-child td', (tds) => tds.map((td) => td.innerText.trim()));
      expect(last[2]).toBe('204');
      expect(receiver.forEvent(eventId).at(-1)?.answered).toBe(204);
      await screenshot(page, 'tenant-callback-delivered');

      expect(dialogs).toEqual([]);
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it("keeps tenant B out of tenant A's charge and callback, in the browser and on the API", async () => {
    // A dead event of A's to try: a retry that got through would change its status.
    receiverFails = true;
    const client = clientPayload();
    expect((await tenantA.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    const victim = receivablePayload(client.client_id, receiver.url);
    expect((await tenantA.api.postIdempotent('/api/v1/accounts-receivable', [victim])).status).toBe(202);
    await waitFor(
      async () => {
        const res = await tenantA.api.send<CallbackEventSummary[]>(
          'GET',
          `/api/v1/callbacks?status=dead&receivable_id=${victim.account_receivable_id}`,
        );
        victimEvent = res.json?.[0]?.event_id ?? '';
        return victimEvent !== '';
      },
      30_000,
      "A's second callback to die",
    );

    const { page, context } = await loggedIn(tenantB);
    try {
      for (const path of [
        `/tenant/charges/${victim.account_receivable_id}`,
        `/tenant/callbacks/${victimEvent}`,
        `/tenant/charges/${chargeId}`,
        `/tenant/callbacks/${eventId}`,
      ]) {
        const res = await open(page, `${console_.url}${path}`);
        expect({ path, status: res.status() }).toEqual({ path, status: 404 });
        expect(await textOf(page, 'h1')).toBe('Não encontrado');
        expect(await page.$('#retry')).toBeNull();
      }
      // Not in B's lists either.
      await open(page, `${console_.url}/tenant/callbacks?status=dead`);
      expect(await page.$(`tr[data-event="${victimEvent}"]`)).toBeNull();

      // A retry forged from B's page (a form posted to A's event): the gateway's 404, nothing retried.
      await open(page, `${console_.url}/tenant/callbacks`);
      const forged = await Promise.all([
        page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
        page.evaluate((action) => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = action;
          document.body.append(form);
          form.submit();
        }, `/tenant/callbacks/${victimEvent}/retry`),
      ]);
      expect(forged[0]?.status()).toBe(404);
      await new Promise((r) => setTimeout(r, 500)); // a retry, had it happened, would be under way
      expect((await eventOf(tenantA, victimEvent)).status).toBe('dead');
      expect(receiver.forEvent(victimEvent)).toHaveLength(4);
    } finally {
      await context.close();
    }

    // The same through the public API with B's own JWT.
    const b = tenantB.api;
    expect(
      (await b.post(`/api/v1/accounts-receivable/${victim.account_receivable_id}/consult-transaction`)).status,
    ).toBe(404);
    expect((await b.send('GET', `/api/v1/accounts-receivable/${victim.account_receivable_id}/history`)).status).toBe(
      404,
    );
    expect((await b.send('GET', `/api/v1/callbacks/${victimEvent}`)).status).toBe(404);
    expect((await b.postIdempotent(`/api/v1/callbacks/${victimEvent}/retry`, undefined)).status).toBe(404);
    const listed = await b.send<CallbackEventSummary[]>(
      'GET',
      `/api/v1/callbacks?receivable_id=${victim.account_receivable_id}`,
    );
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([]);
    const replay = await b.postIdempotent<{ replayed: number }>('/api/v1/callbacks/replay', {
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(replay.status).toBe(202);
    expect(replay.json.replayed).toBe(0);
    expect((await eventOf(tenantA, victimEvent)).status).toBe('dead');
  }, 60_000);

  it('serves every page under the CSP, with the session cookie HttpOnly and SameSite=Lax, and no JWT in any page', async () => {
    const { page, context } = await loggedIn(tenantA);
    try {
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === 'console_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(session!.value).not.toMatch(JWT_PATTERN);
      expect(await page.evaluate(() => document.cookie)).toBe(''); // nothing readable by a script

      for (const path of [
        '/tenant/charges',
        `/tenant/charges/${chargeId}`,
        '/tenant/callbacks',
        `/tenant/callbacks/${eventId}`,
      ]) {
        const res = await open(page, `${console_.url}${path}`);
        expect({ path, status: res.status() }).toEqual({ path, status: 200 });
        expect(res.headers()['content-security-policy']).toBe(
          "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        );
        const html = await page.content();
        expect({ path, jwt: JWT_PATTERN.exec(html)?.[0] }).toEqual({ path, jwt: undefined });
        expect(html).not.toContain(tenantA.accessToken);
        expect(await page.$$('script')).toHaveLength(0);
      }
    } finally {
      await context.close();
    }
  }, 60_000);

  it('requests a booklet for the charge and downloads its PDF through the console', async () => {
    receiverFails = false;
    const { page, context } = await loggedIn(tenantA);
    try {
      await open(page, `${console_.url}/tenant/charges/${chargeId}`);
      await follow(page, '#booklet-link');
      expect(await page.$eval('#booklet-request input[name=url_callback]', (e) => (e as HTMLInputElement).value)).toBe(
        receiver.url,
      );
      await page.type('#booklet-request input[name=payment_slip_id]', paymentSlipId);
      const requested = await submit(page, '#booklet-request button[type=submit]');
      expect(requested.status()).toBe(200);
      expect(await textOf(page, '.flash.info')).toContain('callback booklet.sent');

      // Built: its booklet.sent event shows among the latest booklets, and its page offers the PDF.
      await waitFor(
        async () => {
          await page.reload({ waitUntil: 'domcontentloaded' });
          return (await textOf(page, '#booklet-events')).includes('booklet.sent');
        },
        30_000,
        'the booklet.sent event on the Booklets page',
      );
      await screenshot(page, 'tenant-booklets');
      await follow(page, '#booklet-events tbody tr a');
      const bookletEvent = new URL(page.url()).pathname.split('/').pop()!;
      expect(await textOf(page, '#payload')).toContain(paymentSlipId);
      const href = await page.$eval('#booklet-download', (a) => (a as HTMLAnchorElement).href);

      // Fetched with the browser's cookie: an attachment ends a navigation in Chromium with no page to see.
      const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const pdf = await download(href, { headers: { cookie } });
      expect(pdf).toMatchObject({ status: 200, magic: '%PDF-' });
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      expect(pdf.headers.get('content-disposition')).toMatch(/^attachment; filename="booklet-[A-Za-z0-9_-]+\.pdf"$/);

      // The link pasted: the same PDF. Altered, the gateway's 403.
      const link = (await eventOf(tenantA, bookletEvent)).payload?.download as string;
      const pasted = await fetch(`${console_.url}/tenant/booklets/download?${new URLSearchParams({ link })}`, {
        headers: { cookie },
      });
      expect(pasted.status).toBe(200);
      const altered = await fetch(
        `${console_.url}/tenant/booklets/download?${new URLSearchParams({ link: link.replace(/signature=[^&]+/, 'signature=x') })}`,
        { headers: { cookie } },
      );
      expect(altered.status).toBe(403);

      // Tenant B asking for A's booklet by A's event: the gateway's 404, no PDF.
      const b = await loggedIn(tenantB);
      try {
        const res = await open(b.page, `${console_.url}/tenant/booklets/download?event=${bookletEvent}`);
        expect(res.status()).toBe(404);
        expect(await textOf(b.page, 'h1')).toBe('Não encontrado');
      } finally {
        await b.context.close();
      }
    } finally {
      await context.close();
    }
  }, 60_000);

  it('replays every dead callback since a time: the one left dead is delivered', async () => {
    receiverFails = false;
    expect((await eventOf(tenantA, victimEvent)).status).toBe('dead');
    const { page, context } = await loggedIn(tenantA);
    try {
      await open(page, `${console_.url}/tenant/callbacks?status=dead`);
      expect(await page.$(`#callbacks tr[data-event="${victimEvent}"]`)).not.toBeNull();
      // The form's default `since` is an hour ago (Brasília time): the dead event of a few seconds ago is in it.
      await submit(page, '#replay button[type=submit]');
      expect(new URL(page.url()).pathname).toBe('/tenant/callbacks');
      expect(await textOf(page, '.flash.info')).toBe('Callbacks esgotados de novo na fila de entrega: 1.');
      await waitFor(
        async () => (await eventOf(tenantA, victimEvent)).status === 'delivered',
        15_000,
        'the replayed event to be delivered',
      );
    } finally {
      await context.close();
    }
  }, 30_000);
});
