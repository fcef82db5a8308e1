import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { connectBus, type Bus } from '@payments/bus';
import { loadConsoleConfig, startConsole, type RunningConsole } from '@payments/console';
import { Streams, type DeliveryStats, type RegistrationStats } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { runAdmin } from '../support/admin-cli';
import {
  describeWithBrowser,
  launchBrowser,
  open as openUrl,
  screenshot,
  submit as submitForm,
  watchedPage,
} from '../support/browser';
import { clientPayload, receivablePayload, VALID_CNPJ } from '../support/fixtures';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * The operator's console in a real browser (Debian's Chromium, driven by puppeteer-core)
 * over the whole system: an operator logs in with a credential made by `npm run admin -- operator
 * create`, creates a tenant (named like an XSS probe, shown as text) and rotates its secret, issues
 * and revokes a token, sets a provider account, redrives a dead job, sees the dashboard's charts
 * drawn from real deliveries and registrations, and delivery health per tenant and host (a
 * receiver's hostile answer shown as text). Operator pages refuse a tenant session; the admin API
 * refuses a tenant's JWT. CONSOLE_SCREENSHOTS=1 writes docs/console/operator-*.png.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';
// Four attempts 150 ms apart, then dead: the failing receiver's events die within the test.
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '150,150,150',
  CALLBACK_RETRY_JITTER_PERCENT: '0',
  CALLBACK_POLL_INTERVAL_MS: '50',
};

describeWithBrowser('the operator console in a browser', () => {
  let system: TestSystem;
  let consoleApp: RunningConsole;
  let browser: Browser;
  let page: Page;
  let bus: Bus;
  let credential: string;
  let tenant: TestTenant;
  let receiver: CallbackReceiver;
  let hostileReceiver: Server;
  let hostileUrl: string;
  const tag = randomBytes(4).toString('hex');
  const poisonId = `poison-console-${tag}`;
  /** What the page tried to pop up (an XSS that ran would), and its console errors (a CSP violation). */
  let dialogs: string[] = [];
  let consoleErrors: string[] = [];

  beforeAll(async () => {
    system = await startSystem({ withReceivables: true, env: FAST });
    consoleApp = await startConsole(
      loadConsoleConfig({
        CONSOLE_PORT: '0',
        GATEWAY_URL: system.gateway.url,
        GATEWAY_ADMIN_URL: system.gateway.adminUrl,
        LOG_LEVEL: 'silent',
      }),
      createLogger('console', 'silent'),
    );
    const created = await runAdmin(system.databaseUrl, ['operator', 'create', '--name', 'Console Ops', '--json'], {
      env: { ADMIN_OPERATOR: 'test' },
    });
    if (created.code !== 0) throw new Error(`operator create exited ${created.code}: ${created.stderr}`);
    credential = (JSON.parse(created.stdout) as { credential: string }).credential;

    // Deliveries for the charts and the health page: one receiver takes them, one answers 500 with
    // markup in its body (the receiver's text reaches the page as last_error).
    tenant = await system.newTenant('Charts Corp');
    receiver = await new CallbackReceiver().start();
    hostileReceiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'text/html' });
        res.end(HOSTILE);
      });
    });
    await new Promise<void>((resolve) => hostileReceiver.listen(0, '127.0.0.1', resolve));
    hostileUrl = `http://127.0.0.1:${(hostileReceiver.address() as AddressInfo).port}/hooks`;
    const client = clientPayload({ name: 'Pagador Gráfico' });
    expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    const charges = [
      ...[1, 2, 3, 4].map(() => receivablePayload(client.client_id, receiver.url)),
      ...[1, 2].map(() => receivablePayload(client.client_id, hostileUrl)),
    ];
    expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', charges)).status).toBe(202);

    // A poison job: not JSON, dead-lettered at its first failure.
    bus = await connectBus({
      url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      prefix: system.busPrefix,
      name: 'test-console-poison',
      logger: createLogger('test-console-poison', 'silent'),
    });
    await bus.streams.publishJson(Streams.receivableRegistrations, '{"not json', poisonId);

    browser = await launchBrowser();
    ({ page, dialogs, consoleErrors } = await watchedPage(browser));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await bus?.close();
    await consoleApp?.stop();
    await receiver?.stop();
    if (hostileReceiver) {
      hostileReceiver.closeAllConnections();
      await new Promise((resolve) => hostileReceiver.close(resolve));
    }
    await system?.stop();
  });

  afterEach(() => {
    expect(dialogs).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  /** The admin API as the console calls it, with the operator's credential. */
  async function admin<T>(path: string, token = credential): Promise<{ status: number; body: T }> {
    const res = await fetch(system.gateway.adminUrl + path, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as T };
  }

  /** Goes to a console path and answers the HTTP status of the page. */
  async function open(path: string, on: Page = page): Promise<number> {
    return (await openUrl(on, consoleApp.url + path)).status();
  }

  /** Clicks a form's submit button and waits for the page it leads to; answers that page's status. */
  async function submit(selector: string, on: Page = page): Promise<number> {
    return (await submitForm(on, selector)).status();
  }

  const text = (selector: string, on: Page = page) => on.$eval(selector, (el) => el.textContent?.trim() ?? '');
  const texts = (selector: string, on: Page = page) =>
    on.$$eval(selector, (els) => els.map((el) => el.textContent?.trim() ?? ''));

  /** docs/console/operator-<name>.png, with CONSOLE_SCREENSHOTS=1 only. */
  const shoot = (name: string) => screenshot(page, `operator-${name}`);

  async function logInAsOperator(on: Page = page): Promise<void> {
    expect(await open('/login', on)).toBe(200);
    await on.type('#operator-login input[name=credential]', credential);
    expect(await submit('#operator-login button[type=submit]', on)).toBe(200);
    expect(new URL(on.url()).pathname).toBe('/operator/dashboard');
  }

  it('an operator logs in, creates a tenant named like markup (shown as text) and rotates its secret', async () => {
    await logInAsOperator();
    expect(await open('/operator/tenants')).toBe(200);
    await page.type('form[action="/operator/tenants/new"] input[name=name]', HOSTILE);
    // A confirmation page first (console-rotation.test.ts submits these twice), then the action.
    expect(await submit('form[action="/operator/tenants/new"] button[type=submit]')).toBe(200);
    expect(await submit('form.confirm button[type=submit]')).toBe(201);
    // The new tenant's name is text in the heading; its token and secret are shown once, here.
    expect(await text('h1')).toBe(`Cliente ${HOSTILE} criado`);
    expect(await page.$$('img')).toHaveLength(0);
    const token = await text('[data-secret=integration_token]');
    const firstSecret = await text('[data-secret=signing_secret]');
    expect(token).toMatch(/^itk_/);
    expect(firstSecret).toMatch(/^whsec_/);
    const auth = await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${token}` });
    expect(auth.status).toBe(200);

    // Listed by name, as text, and opened from there.
    expect(await open('/operator/tenants')).toBe(200);
    expect(await texts('table.tenants .tenant-name')).toContain(HOSTILE);
    expect(await page.$$('img')).toHaveLength(0);
    const link = await page.$$eval('table.tenants a.tenant-name', (as) =>
      as.map((a) => ({ name: a.textContent, href: a.getAttribute('href') })),
    );
    const href = link.find((l) => l.name === HOSTILE)!.href!;
    const tenantId = href.split('/').pop()!;
    expect(await open(href)).toBe(200);
    expect(await text('dd.tenant-name')).toBe(HOSTILE);

    // Rotate: a new secret, shown once; the old one signs on for the overlap.
    await page.$eval('input[name=overlap_hours]', (el) => ((el as HTMLInputElement).value = '2'));
    expect(await submit(`form[action="${href}/rotate-secret"] button[type=submit]`)).toBe(200);
    expect(await submit('form.confirm button[type=submit]')).toBe(200);
    expect(await text('h1')).toBe('Segredo de assinatura trocado');
    const rotated = await text('[data-secret=signing_secret]');
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(firstSecret);

    // Issue a token (shown once), then revoke it from the tenant's page: the gateway refuses it at once.
    expect(await open(href)).toBe(200);
    expect(await submit(`form[action="${href}/tokens/new"] button[type=submit]`)).toBe(200);
    expect(await submit('form.confirm button[type=submit]')).toBe(201);
    const issued = await text('[data-secret=integration_token]');
    expect(issued).toMatch(/^itk_/);
    expect(
      (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${issued}` })).status,
    ).toBe(200);
    expect(await open(href)).toBe(200);
    expect(await page.$$('table.tokens tbody tr')).toHaveLength(2);
    // The table shows each token's hint (its first characters), never the token.
    const rows = await page.$$eval('table.tokens tbody tr', (trs) =>
      trs.map((r) => ({ id: r.getAttribute('data-token-id'), hint: r.querySelector('td')?.textContent ?? '' })),
    );
    expect(rows.map((r) => r.hint).join(' ')).not.toContain(issued);
    const issuedRow = rows.find((r) => issued.startsWith(r.hint.replace('…', '')));
    expect(issuedRow).toBeDefined();
    expect(await submit(`tr[data-token-id="${issuedRow!.id}"] button[type=submit]`)).toBe(200);
    expect(await texts('.flash.info')).toEqual([
      'O token está revogado: os JWTs emitidos com ele param de funcionar na hora.',
    ]);
    expect(
      (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${issued}` })).status,
    ).toBe(401);

    // A provider account, set from the form (folded under its summary when one is set) and shown after.
    if (!(await page.$eval('details.panel', (d) => (d as HTMLDetailsElement).open)))
      await page.click('details.panel summary');
    for (const [name, value] of [
      ['beneficiary_name', 'Beneficiária Ltda'],
      ['beneficiary_tax_id', VALID_CNPJ],
    ]) {
      await page.$eval(`input[name=${name}]`, (el) => ((el as HTMLInputElement).value = ''));
      await page.type(`input[name=${name}]`, value!);
    }
    expect(await submit(`form[action="${href}/provider-account"] button[type=submit]`)).toBe(200);
    expect(await texts('.flash.info')).toEqual([
      'A conta no provedor está definida (sandbox), para as cobranças aceitas a partir de agora.',
    ]);
    expect(await text('dl.provider-account')).toContain('Beneficiária Ltda');

    // A bad form: the admin API's problem is the page, naming the field.
    expect(await open('/operator/tenants/new')).toBe(200);
    await page.$eval('form.confirm input[name=name]', (el) => el.setAttribute('maxlength', '500'));
    await page.$eval('form.confirm input[name=name]', (el) => ((el as HTMLInputElement).value = 'y'.repeat(201)));
    const refused = await submit('form.confirm button[type=submit]');
    expect(refused).toBeGreaterThanOrEqual(400);
    expect(refused).toBeLessThan(500);
    expect(await text('.problem')).toContain('/name');
    // The browser reports the refused page's status; nothing else (no CSP violation).
    expect(consoleErrors.splice(0)).toEqual([expect.stringContaining(`status of ${refused}`)]);

    // The audit says who did all this, newest first, a page at a time.
    expect(await open(`/operator/audit?tenant_id=${tenantId}&limit=2`)).toBe(200);
    const firstPage = await texts('table.audit td.mono:nth-child(4)');
    expect(firstPage).toEqual(['tenant.account', 'token.revoke']);
    expect(await texts('table.audit tbody td:nth-child(3)')).toEqual(['Console Ops', 'Console Ops']);
    expect(await submit('a[rel=next]')).toBe(200);
    expect(await texts('table.audit td.mono:nth-child(4)')).toEqual(['token.create', 'tenant.rotate-secret']);

    // Disable: its tokens stop.
    expect(await open(href)).toBe(200);
    expect(await submit(`form[action="${href}/disable"] button[type=submit]`)).toBe(200);
    expect(await text('dd .badge')).toBe('desativado');
    expect(
      (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${token}` })).status,
    ).toBe(401);
    expect(await open('/operator/tenants')).toBe(200);
    await shoot('tenants');
  }, 60_000);

  it('redrives a dead job from the dead letters page', async () => {
    let id: string | null = null;
    await waitFor(
      async () => {
        expect(await open('/operator/dead-letters')).toBe(200);
        id = await page.$$eval(
          'table.dead-letters tbody tr',
          (rows, msgId) =>
            rows.find((r) => r.querySelector('.msg-id')?.textContent === msgId)?.getAttribute('data-dead-letter-id') ??
            null,
          poisonId,
        );
        return id !== null;
      },
      20_000,
      'the poison job listed',
    );
    expect(await submit(`tr[data-dead-letter-id="${id}"] button[type=submit]`)).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/operator/dead-letters');
    const [flash] = await texts('.flash.info');
    expect(flash).toMatch(
      new RegExp(`^A mensagem morta ${id} foi publicada de novo em \\w+ como ${poisonId}:redrive:${id}\\.$`),
    );
    expect(await page.$(`tr[data-dead-letter-id="${id}"]`)).toBeNull();
    // Still poison: it comes back under its redrive's message id.
    await waitFor(
      async () => {
        await open('/operator/dead-letters');
        return (await texts('table.dead-letters .msg-id')).includes(`${poisonId}:redrive:${id}`);
      },
      20_000,
      'the redriven poison dead-lettered again',
    );
  }, 60_000);

  it('the dashboard draws deliveries, latency and registrations for the last hour and the last day', async () => {
    // The rollups run every few seconds: wait until the admin API counts what happened.
    await waitFor(
      async () => {
        const d = (await admin<DeliveryStats>('/admin/v1/stats/deliveries?window=hour')).body;
        const r = (await admin<RegistrationStats>('/admin/v1/stats/registrations?window=hour')).body;
        const sum = <K extends string>(series: Array<Record<K, number | null>>, key: K) =>
          series.reduce((s, b) => s + (b[key] ?? 0), 0);
        return sum(d.series, 'delivered') >= 4 && sum(d.series, 'dead') >= 2 && sum(r.series, 'registered') >= 6;
      },
      45_000,
      'the statistics to count the deliveries and registrations',
    );
    // A window the admin API does not know: the field is named.
    expect(await open('/operator/dashboard?window=week')).toBe(400);
    expect(await text('.problem')).toContain('window: must be one of hour, day');
    consoleErrors.splice(0);
    expect(await open('/operator')).toBe(200);
    expect(await text('header nav a.current')).toBe('Painel');
    for (const window of ['hour', 'day'] as const) {
      if (window === 'day') {
        expect(await submit('nav.window-switch a[href*="window=day"]')).toBe(200);
      }
      const buckets = window === 'hour' ? '60' : '96';
      for (const chart of ['deliveries', 'end-to-end', 'latency', 'registrations'])
        expect(await page.$eval(`svg#${chart}-${window}`, (el) => el.getAttribute('data-buckets'))).toBe(buckets);
      const count = (selector: string) => page.$$eval(selector, (els) => els.length);
      expect(await count(`svg#deliveries-${window} .series-delivered rect.bar`)).toBeGreaterThan(0);
      expect(await count(`svg#deliveries-${window} .series-failed rect.bar`)).toBeGreaterThan(0);
      expect(await count(`svg#deliveries-${window} .series-dead rect.bar`)).toBeGreaterThan(0);
      expect(await count(`svg#latency-${window} .series-p99 circle.point`)).toBeGreaterThan(0);
      expect(await count(`svg#latency-${window} .series-p99 polyline`)).toBeGreaterThan(0);
      expect(await count(`svg#registrations-${window} .series-registered rect.bar`)).toBeGreaterThan(0);
      expect(await count('.chart-empty')).toBe(0);
      // Drawn, not just present: the bars have height on the screen.
      const box = await (await page.$(`svg#deliveries-${window} .series-delivered rect.bar`))!.boundingBox();
      expect(box!.height).toBeGreaterThan(0);
      expect(await text(`svg#registrations-${window} desc`)).toMatch(/\b([6-9]|\d\d+) registrados\b/);
      if (window === 'hour') await shoot('dashboard');
    }
    // One tenant's figures, chosen in the form (the tenants' names are text there too).
    expect(await page.$$('img')).toHaveLength(0);
    await page.select('select[name=tenant_id]', tenant.tenantId);
    expect(await submit('form.filters button[type=submit]')).toBe(200);
    expect(new URL(page.url()).searchParams.get('tenant_id')).toBe(tenant.tenantId);
    expect(new URL(page.url()).searchParams.get('window')).toBe('day');
    expect(await text('dl.totals')).toMatch(
      /4 entregues, 8 com falha; 2 eventos mortos\s*Registros\s*6 registrados, 0 recusados/,
    );
    expect(await page.$$eval('svg#deliveries-day .series-delivered rect.bar', (els) => els.length)).toBeGreaterThan(0);
  }, 90_000);

  it('delivery health per tenant and per host shows the receiver’s error as text', async () => {
    const row = () =>
      page
        .$eval(`table.health-tenant tr[data-key="${tenant.tenantId}"]`, (r) =>
          Array.from(r.querySelectorAll('td')).map((td) => td.textContent?.trim() ?? ''),
        )
        .catch(() => [] as string[]);
    let tenantRow: string[] = [];
    // The rollup runs every few seconds: until it has counted every failed attempt (2 events x 4).
    await waitFor(
      async () => {
        expect(await open('/operator/health')).toBe(200);
        tenantRow = await row();
        return (await page.$$('table.health-host tbody tr')).length >= 2 && Number(tenantRow[3]) >= 8;
      },
      30_000,
      'both hosts and every failed attempt in the health tables',
    );
    expect(tenantRow[0]).toBe('Charts Corp');
    expect(tenantRow.slice(1, 6)).toEqual(['33,3%', '4', '8', '2', '0']); // success, delivered, failed, dead, pending
    const hostile = new URL(hostileUrl).host;
    const lastError = await page.$eval(
      `table.health-host tr[data-key="${hostile}"] .last-error`,
      (el) => el.textContent,
    );
    expect(lastError).toContain(HOSTILE);
    expect(await page.$$('img')).toHaveLength(0);
    await shoot('health');
  }, 60_000);

  it('operator pages refuse a tenant session, and the admin API refuses tenant tokens and JWTs', async () => {
    const context = await browser.createBrowserContext();
    try {
      const tenantPage = await context.newPage();
      expect(await open('/login', tenantPage)).toBe(200);
      await tenantPage.type('#tenant-login input[name=token]', tenant.integrationToken);
      await submit('#tenant-login button[type=submit]', tenantPage);
      expect(new URL(tenantPage.url()).pathname).toMatch(/^\/tenant\//);
      for (const path of ['/operator', '/operator/tenants', '/operator/dead-letters', '/operator/audit'])
        expect(await open(path, tenantPage)).toBe(403);
      expect(await text('h1', tenantPage)).toBe('Não permitido');
    } finally {
      await context.close();
    }
    for (const token of [tenant.accessToken, tenant.integrationToken]) {
      expect((await admin('/admin/v1/tenants', token)).status).toBe(401);
      expect((await admin('/admin/v1/stats/deliveries', token)).status).toBe(401);
    }
    // Nobody at all: sent to log in.
    const context2 = await browser.createBrowserContext();
    try {
      const anonymous = await context2.newPage();
      expect(await open('/operator/tenants', anonymous)).toBe(200);
      expect(new URL(anonymous.url()).pathname).toBe('/login');
    } finally {
      await context2.close();
    }
  }, 30_000);

  it("an operator's session ends at the next page once the credential is revoked (the admin API checks it on every call)", async () => {
    const made = await runAdmin(system.databaseUrl, ['operator', 'create', '--name', 'Leaving Ops', '--json'], {
      env: { ADMIN_OPERATOR: 'test' },
    });
    const leaving = JSON.parse(made.stdout) as { operator_id: string; credential: string };
    const context = await browser.createBrowserContext();
    try {
      const { page: other } = await watchedPage(context);
      expect(await open('/login', other)).toBe(200);
      await other.type('#operator-login input[name=credential]', leaving.credential);
      expect(await submit('#operator-login button[type=submit]', other)).toBe(200);
      expect(await open('/operator/tenants', other)).toBe(200);
      const revoked = await runAdmin(system.databaseUrl, ['operator', 'revoke', leaving.operator_id], {
        env: { ADMIN_OPERATOR: 'test' },
      });
      expect(revoked.code).toBe(0);
      expect(await open('/operator/tenants', other)).toBe(200);
      expect(new URL(other.url()).pathname).toBe('/login');
      expect(await texts('.flash.error', other)).toEqual([expect.stringContaining('Sua sessão terminou')]);
      // And it stays ended: the cookie is gone.
      expect(await open('/operator/tenants', other)).toBe(200);
      expect(new URL(other.url()).pathname).toBe('/login');
    } finally {
      await context.close();
    }
  }, 30_000);
});
