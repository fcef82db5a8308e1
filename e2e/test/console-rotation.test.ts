import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { runAdmin } from '../support/admin-cli';
import {
  describeWithBrowser,
  launchBrowser,
  open as openUrl,
  submit as submitForm,
  watchedPage,
} from '../support/browser';
import { BuiltConsole, invitedPerson, signIn } from '../support/built-console';
import { freePort, startSystem, type TestSystem } from '../support/system';

/*
 * The console's actions that show a secret, in a real browser over the gateway, on the built console
 * in production mode (support/built-console) with an invited operator signed in: each goes through a
 * confirmation page whose form carries an Idempotency-Key, so submitting that form twice (two
 * submissions at once, as a double click or a second tab sends them; a reload of the answer) creates
 * one tenant and rotates once, and shows the same secret each time. Checked against the admin API's audit, the record of what the gateway did. A rotation during
 * the overlap it started asks for an explicit confirmation naming when the overlap ends.
 */

describeWithBrowser('confirmed, idempotent secret actions in the operator console', () => {
  let system: TestSystem;
  let consoleApp: BuiltConsole;
  let browser: Browser;
  let page: Page;
  let credential: string;
  let dialogs: string[] = [];
  let consoleErrors: string[] = [];
  const name = `Rotation Corp ${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    // The whole system: signing in lands on the dashboard, which asks the services for their figures.
    system = await startSystem({ withReceivables: true });
    consoleApp = new BuiltConsole(await freePort());
    await consoleApp.start({ GATEWAY_URL: system.gateway.url, GATEWAY_ADMIN_URL: system.gateway.adminUrl });
    const created = await runAdmin(system.databaseUrl, ['operator', 'create', '--name', 'Rotation Ops', '--json'], {
      env: { ADMIN_OPERATOR: 'test' },
    });
    if (created.code !== 0) throw new Error(`operator create exited ${created.code}: ${created.stderr}`);
    credential = (JSON.parse(created.stdout) as { credential: string }).credential;
    browser = await launchBrowser();
    ({ page, dialogs, consoleErrors } = await watchedPage(browser));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await consoleApp?.stop();
    await system?.stop();
  });

  afterEach(() => {
    expect(dialogs).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  async function admin<T>(path: string): Promise<T> {
    const res = await fetch(system.gateway.adminUrl + path, { headers: { authorization: `Bearer ${credential}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  }

  /** How many times the audit says the tenant was created and its secret rotated (in any order). */
  async function actionsOn(tenantId: string): Promise<{ created: number; rotated: number }> {
    const audit = await admin<{ items: Array<{ action: string }> }>(`/admin/v1/audit?tenant_id=${tenantId}&limit=1000`);
    const count = (action: string) => audit.items.filter((i) => i.action === action).length;
    return { created: count('tenant.create'), rotated: count('tenant.rotate-secret') };
  }

  const open = async (path: string, on: Page = page) => (await openUrl(on, consoleApp.url + path)).status();
  const submit = async (selector: string, on: Page = page) => (await submitForm(on, selector)).status();
  const text = (selector: string, on: Page = page) => on.$eval(selector, (el) => el.textContent?.trim() ?? '');
  const CONFIRM = 'form.confirm button[type=submit]';
  const KEY = 'form.confirm input[name=idempotency_key]';

  /** Counts the POSTs the browser sends to `action` while `run` runs, on every page given. */
  async function postsTo(action: string, pages: Page[], run: () => Promise<void>): Promise<number> {
    let posts = 0;
    const count = (r: { method(): string; url(): string }) => {
      if (r.method() === 'POST' && r.url() === consoleApp.url + action) posts += 1;
    };
    for (const p of pages) p.on('request', count);
    try {
      await run();
    } finally {
      for (const p of pages) p.off('request', count);
    }
    return posts;
  }

  /**
   * One confirmation form submitted twice at once, as a double click or a second tab holding the same
   * page does: the confirmation page is opened in two tabs, the second given the first's key (one
   * rendered form), and both are submitted together. Answers the status and the secret each tab shows.
   */
  async function sameFormTwiceAtOnce(
    confirmPath: string,
    action: string,
    secret: string,
  ): Promise<Array<{ status: number; secret: string }>> {
    const second = await browser.newPage();
    try {
      expect(await open(confirmPath)).toBe(200);
      expect(await open(confirmPath, second)).toBe(200);
      const key = await page.$eval(KEY, (el) => (el as HTMLInputElement).value);
      expect(key).toMatch(/^[0-9a-f-]{36}$/);
      await second.$eval(KEY, (el, k) => ((el as HTMLInputElement).value = k), key);
      const answers: Array<{ status: number; secret: string }> = [];
      const posts = await postsTo(action, [page, second], async () => {
        // Submitted by the form itself rather than a click: a click needs the tab in front.
        const send = async (on: Page) => {
          const [response] = await Promise.all([
            on.waitForNavigation({ waitUntil: 'domcontentloaded' }),
            on.$eval('form.confirm', (f) => (f as HTMLFormElement).requestSubmit()),
          ]);
          return response?.status() ?? 0;
        };
        const statuses = await Promise.all([send(page), send(second)]);
        for (const [i, on] of [page, second].entries())
          answers.push({ status: statuses[i]!, secret: await text(`[data-secret=${secret}]`, on) });
      });
      expect(posts).toBe(2);
      return answers;
    } finally {
      await second.close();
    }
  }

  it('creates one tenant and rotates once when a confirmation form is submitted twice, showing the same secret', async () => {
    const operator = await invitedPerson(system.gateway.adminUrl, credential, { role: 'operator' });
    await signIn(page, consoleApp.url, operator, '/operator/tenants');

    // Create: the list's form leads to a confirmation page, which does nothing until confirmed.
    expect(await open('/operator/tenants')).toBe(200);
    await page.type('form[action="/operator/tenants/new"] input[name=name]', name);
    expect(await submit('form[action="/operator/tenants/new"] button[type=submit]')).toBe(200);
    expect(await page.$eval('form.confirm input[name=name]', (el) => (el as HTMLInputElement).value)).toBe(name);
    const listed = async () =>
      (await admin<{ items: Array<{ tenant_id: string; name: string }> }>('/admin/v1/tenants')).items.filter(
        (t) => t.name === name,
      );
    expect(await listed()).toHaveLength(0);
    const created = await sameFormTwiceAtOnce(
      `/operator/tenants/new?name=${encodeURIComponent(name)}`,
      '/operator/tenants',
      'integration_token',
    );
    expect(created.map((c) => c.status)).toEqual([201, 201]);
    expect(created[0]!.secret).toMatch(/^itk_/);
    expect(created[1]!.secret).toBe(created[0]!.secret);
    const mine = await listed();
    expect(mine).toHaveLength(1);
    const tenantId = mine[0]!.tenant_id;
    expect(await actionsOn(tenantId)).toEqual({ created: 1, rotated: 0 });

    // Rotate: the tenant page's form leads to the confirmation page (2 h of overlap), then twice at once.
    expect(await open(`/operator/tenants/${tenantId}`)).toBe(200);
    await page.$eval('input[name=overlap_hours]', (el) => ((el as HTMLInputElement).value = '2'));
    expect(await submit(`form[action="/operator/tenants/${tenantId}/rotate-secret"] button[type=submit]`)).toBe(200);
    expect(new URL(page.url()).pathname).toBe(`/operator/tenants/${tenantId}/rotate-secret`);
    expect(await page.$('input[name=confirm_overlap]')).toBeNull();
    const action = `/operator/tenants/${tenantId}/rotate-secret`;
    const rotated = await sameFormTwiceAtOnce(`${action}?overlap_hours=2`, action, 'signing_secret');
    expect(rotated.map((r) => r.status)).toEqual([200, 200]);
    const shown = rotated[0]!.secret;
    expect(shown).toMatch(/^whsec_/);
    expect(rotated[1]!.secret).toBe(shown);
    expect(await actionsOn(tenantId)).toEqual({ created: 1, rotated: 1 });

    // A reload of the answer sends the same form again: the same secret, still one rotation.
    const reposted = await postsTo(action, [page], async () => {
      expect((await page.reload({ waitUntil: 'domcontentloaded' }))?.status()).toBe(200);
    });
    expect(reposted).toBe(1);
    expect(await text('[data-secret=signing_secret]')).toBe(shown);
    expect(await actionsOn(tenantId)).toEqual({ created: 1, rotated: 1 });

    // The tenant page says until when the previous secret is accepted; rotating again asks first.
    const { items } = await admin<{ items: Array<{ tenant_id: string; previous_secret_valid_until: string | null }> }>(
      '/admin/v1/tenants',
    );
    const until = items.find((t) => t.tenant_id === tenantId)?.previous_secret_valid_until;
    expect(Date.parse(until ?? '')).toBeGreaterThan(Date.now() + 110 * 60_000);
    expect(await open(`/operator/tenants/${tenantId}`)).toBe(200);
    expect(await page.$eval('[data-overlap-until]', (el) => el.getAttribute('data-overlap-until'))).toBe(until);
    expect(await open(`${action}?overlap_hours=2`)).toBe(200);
    expect(await page.$eval('form.confirm [data-overlap-until]', (el) => el.textContent)).toContain(
      '(horário de Brasília)',
    );
    // The checkbox is required: the browser does not submit without it, and nothing rotates.
    await page.click(CONFIRM);
    expect(new URL(page.url()).pathname).toBe(action);
    expect(await actionsOn(tenantId)).toEqual({ created: 1, rotated: 1 });
    await page.click('input[name=confirm_overlap]');
    expect(await submit(CONFIRM)).toBe(200);
    expect(await text('[data-secret=signing_secret]')).not.toBe(shown);
    expect(await actionsOn(tenantId)).toEqual({ created: 1, rotated: 2 });
  }, 120_000);
});
