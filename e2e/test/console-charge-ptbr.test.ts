import type { Browser } from 'puppeteer-core';
import type { ConsultResult } from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { BuiltConsole, invitedPerson, signIn } from '../support/built-console';
import { describeWithBrowser, follow, launchBrowser, open, screenshot, textOf, watchedPage } from '../support/browser';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import {
  asRegistered,
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
  setSandboxMode,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { freePort, startSystem, type TestSystem, type TestTenant } from '../support/system';

/**
 * A charge's page in Chromium, against the built console in production mode (support/built-console)
 * over the whole system with the bank sandbox, signed in as an invited tenant viewer: registered and paid,
 * it shows its payment data, its amount as R$ and "Pago em" in Brasília time (payment_date is São
 * Paulo civil time: shown as it is, not shifted), in pt-BR by default; the language link switches the
 * same page to English. Expected texts are written from the API's own values, not by the console's
 * formatters.
 */
const VALUE = 1234.56;
const DUE_DATE = '2027-12-15';

let system: TestSystem;
let console_: BuiltConsole;
let operatorCredential: string;
let browser: Browser;
let receiver: CallbackReceiver;
let tenant: TestTenant;
let chargeId: string;
let paymentData: ReturnType<typeof asRegistered>['payment_data'];
let paid: ConsultResult;

describeWithBrowser('a charge page in pt-BR in Chromium', () => {
  beforeAll(async () => {
    system = await startSystem({ withReceivables: true, env: { PROVIDER_RETRIES: '0' } });
    receiver = await new CallbackReceiver().start();
    console_ = new BuiltConsole(await freePort());
    await console_.start({ GATEWAY_URL: system.gateway.url, GATEWAY_ADMIN_URL: system.gateway.adminUrl });
    const adminDb = await openAdminDatabase(system.databaseUrl);
    try {
      operatorCredential = (await createOperator(adminDb, 'Charge page Ops', { operator: 'test' })).credential;
    } finally {
      await adminDb.destroy();
    }
    tenant = await system.newTenant('Padaria Alfa');

    const client = clientPayload({ name: 'Padaria Alfa Ltda' });
    expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    const charge = receivablePayload(client.client_id, receiver.url, {
      value: VALUE,
      items: [{ description: 'Pães', quantity: 1, price: VALUE }],
      due_date: DUE_DATE,
      emission_date: brasiliaDate(),
    });
    chargeId = charge.account_receivable_id;
    expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [charge])).status).toBe(202);
    await waitFor(() => receivableCallbacks(receiver, chargeId).some(isRegistered), 20_000, 'the registered callback');
    paymentData = asRegistered(receivableCallbacks(receiver, chargeId).find(isRegistered)).payment_data;

    const sandboxUrl = system.sandboxUrl ?? '';
    expect((await payAtSandbox(sandboxUrl, paymentData.our_number, 'pix')).status).toBe(200);
    await waitFor(() => receivableCallbacks(receiver, chargeId).some(isPaid), 20_000, 'the paid callback');
    const consult = await tenant.api.send<ConsultResult>(
      'POST',
      `/api/v1/accounts-receivable/${chargeId}/consult-transaction`,
    );
    expect(consult.status).toBe(200);
    paid = consult.json;
    browser = await launchBrowser();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await console_?.stop();
    await receiver?.stop();
    await system?.stop();
  });

  it('shows the payment data, R$ and "Pago em" in Brasília time; lang=en switches to English', async () => {
    // payment_date is Brasília civil time: a moment ago, 3 hours behind UTC (no daylight saving since 2019).
    const civil = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):\d{2}\.\d{3}$/.exec(paid.payment_date ?? '');
    expect(civil).not.toBeNull();
    const [, year, month, day, hour, minute] = civil ?? [];
    const asUtc = Date.parse(`${paid.payment_date}-03:00`);
    expect(Math.abs(Date.now() - asUtc)).toBeLessThan(5 * 60_000);

    const context = await browser.createBrowserContext();
    const { page, dialogs, consoleErrors } = await watchedPage(context);
    try {
      const viewer = await invitedPerson(system.gateway.adminUrl, operatorCredential, {
        role: 'tenant_viewer',
        tenantId: tenant.tenantId,
      });
      await signIn(page, console_.url, viewer, `/tenant/charges/${chargeId}`);
      const res = await open(page, `${console_.url}/tenant/charges/${chargeId}`);
      expect(res.status()).toBe(200);
      expect(await page.$eval('html', (h) => h.lang)).toBe('pt-BR');
      expect(await textOf(page, '#amount-due')).toBe('R$ 1.234,56');
      expect(await textOf(page, '#charge-state')).toBe('Aprovada');
      expect(await textOf(page, '#payer-name')).toBe('Padaria Alfa Ltda');
      expect(await textOf(page, '#due-date')).toBe('15/12/2027');
      // clientPayload's CPF, sent punctuated, shown in its official punctuation.
      expect(await textOf(page, '#payer-tax-id')).toBe('529.982.247-25');
      const paidOnLabel = await page.$eval('#paid-on', (dd) => dd.previousElementSibling?.textContent);
      expect(paidOnLabel).toBe('Pago em');
      expect(await textOf(page, '#paid-on')).toBe(`${day}/${month}/${year} ${hour}:${minute} (horário de Brasília)`);
      expect(await textOf(page, '#amount-paid')).toBe('R$ 1.234,56');
      expect(await textOf(page, '#paid-with')).toBe('Pix');

      // The payment data, as the registered callback carried it.
      expect(await textOf(page, '#our-number')).toBe(paymentData.our_number);
      expect((await textOf(page, '#typeable-line')).replace(/[ .]/g, '')).toBe(paymentData.typeable_line);
      expect(await textOf(page, '#barcode')).toBe(paymentData.barcode);
      expect(await page.$eval('#pix-copy-and-paste textarea', (t) => (t as HTMLTextAreaElement).value)).toBe(
        paymentData.pix_copy_and_paste,
      );
      // The sandbox's PDF and QR image are its own public links: linked to, not streamed.
      expect(await page.$eval('#slip-pdf', (a) => (a as HTMLAnchorElement).href)).toBe(paymentData.pdf);
      expect(await page.$eval('#qr-code-link', (a) => (a as HTMLAnchorElement).href)).toBe(paymentData.qrcode_image);
      expect(await textOf(page, '#history')).toMatch(/Pendente[\s\S]*Aprovada/);
      await screenshot(page, 'tenant-charge-paid');

      // The language link: the same page in English, still Brasília time.
      await follow(page, 'header a.lang');
      expect(new URL(page.url()).pathname).toBe(`/tenant/charges/${chargeId}`);
      expect(await page.$eval('html', (h) => h.lang)).toBe('en');
      expect(await textOf(page, '#amount-due')).toBe('R$1,234.56');
      expect(await page.$eval('#paid-on', (dd) => dd.previousElementSibling?.textContent)).toBe('Paid on');
      const h = Number(hour);
      const clock = `${h % 12 === 0 ? 12 : h % 12}:${minute} ${h < 12 ? 'AM' : 'PM'}`;
      expect(await textOf(page, '#paid-on')).toBe(`${month}/${day}/${year} ${clock} (Brasília time)`);
      expect(await textOf(page, 'h2')).toBe('Payment data');

      // The choice is kept: another page is in English too, and the link switches back.
      await open(page, `${console_.url}/tenant/callbacks`);
      expect(await textOf(page, 'h1')).toBe('Callbacks');
      expect(await textOf(page, '#replay')).toContain('Brasília time');
      await follow(page, 'header a.lang');
      expect(await page.$eval('html', (h) => h.lang)).toBe('pt-BR');
      expect(await textOf(page, '#replay')).toContain('horário de Brasília');

      expect(dialogs).toEqual([]);
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('a charge the bank has not registered yet says so', async () => {
    const sandboxUrl = system.sandboxUrl ?? '';
    await setSandboxMode(sandboxUrl, 'down');
    try {
      const client = clientPayload();
      expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
      const waiting = receivablePayload(client.client_id, receiver.url);
      const id = waiting.account_receivable_id;
      expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [waiting])).status).toBe(202);
      await waitFor(
        async () =>
          (await tenant.api.send('POST', `/api/v1/accounts-receivable/${id}/consult-transaction`)).status === 200,
        20_000,
        'the charge stored',
      );
      const context = await browser.createBrowserContext();
      const { page } = await watchedPage(context);
      try {
        const viewer = await invitedPerson(system.gateway.adminUrl, operatorCredential, {
          role: 'tenant_viewer',
          tenantId: tenant.tenantId,
        });
        await signIn(page, console_.url, viewer, `/tenant/charges/${id}`);
        const res = await open(page, `${console_.url}/tenant/charges/${id}`);
        expect(res.status()).toBe(200);
        expect(await textOf(page, '#awaiting-registration')).toContain('Aguardando registro no banco');
        expect(await textOf(page, '#charge-state')).toBe('Pendente');
        expect(await textOf(page, '#not-paid')).toBe('Ainda não paga.');
        expect(await page.$('#typeable-line')).toBeNull();
      } finally {
        await context.close();
      }
    } finally {
      await setSandboxMode(sandboxUrl, 'normal');
    }
  }, 60_000);
});
