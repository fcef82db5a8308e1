import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthenticateResponse, CancellationCallback, PaidCallback, RegisteredCallback } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import {
  createTestCertificateAuthority,
  writeSandboxInterTls,
  type TestCertificateAuthority,
} from '@payments/inter-cobranca/test-certificates';
import { barcodeProblems, brCodeProblems, decodeQrPng, typeableLineProblems } from '@payments/test-support/slip-checks';
import { download } from '../support/download';
import { runAdmin } from '../support/admin-cli';
import { ApiClient } from '../support/api-client';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { OtlpCollector } from '../support/otlp-collector';
import { AppProcess } from '../support/process';
import { receivableCallbacks, type ReceivableCallback } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { deleteBusStreams, freePort } from '../support/system';

/*
 * A tenant on `provider inter`, end to end against the bank sandbox's Inter dialect over
 * mutual TLS: every app runs as its own process as `npm start` runs it, the account is set with the
 * admin CLI, and every log line and span is kept, to show the account's secrets appear in none.
 */

let database: { url: string; drop: () => Promise<void> };
let collector: OtlpCollector;
let receiver: CallbackReceiver;
let busPrefix: string;
let gatewayUrl: string;
let sandboxUrl: string;
let interBaseUrl: string;
let ca: TestCertificateAuthority;
let dir: string;
let adminDb: Awaited<ReturnType<typeof openAdminDatabase>>;
const apps: Record<string, AppProcess> = {};
/** Every secret handed to the admin CLI: none may show up in a log line or span. */
const secrets: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  collector = await new OtlpCollector().start();
  receiver = await new CallbackReceiver().start();
  dir = mkdtempSync(join(tmpdir(), 'inter-e2e-'));
  ca = createTestCertificateAuthority('Inter sandbox e2e CA');
  const tls = writeSandboxInterTls(ca, dir);
  busPrefix = `t${randomBytes(5).toString('hex')}`;
  const [gatewayPort, sandboxPort, interPort, receivablesPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  interBaseUrl = `https://127.0.0.1:${interPort}/inter`;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    BUS_TIMEOUT_MS: '5000',
    // debug: the most a log could say about an account
    LOG_LEVEL: 'debug',
    PORT: String(gatewayPort),
    ADMIN_PORT: '0',
    PUBLIC_BASE_URL: gatewayUrl,
    BANK_SANDBOX_PORT: String(sandboxPort),
    BANK_SANDBOX_INTER_PORT: String(interPort),
    ...tls,
    RECEIVABLES_PORT: String(receivablesPort),
    RECEIVABLES_PUBLIC_URL: `http://127.0.0.1:${receivablesPort}`,
    INTER_TRUSTED_CA_FILE: tls.BANK_SANDBOX_INTER_TLS_CA_FILE,
    PROVIDER_TIMEOUT_MS: '3000',
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    PROVIDER_BASE_URL: sandboxUrl,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${receivablesPort}/provider/webhooks/bank-sandbox`,
    CALLBACK_POLL_INTERVAL_MS: '100',
    OTEL_SDK_DISABLED: 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const ready: Record<string, string> = {
    'bank-sandbox': 'bank-sandbox ready',
    gateway: 'gateway listening',
    'clients-svc': 'clients-svc ready',
    'receivables-svc': 'receivables-svc ready',
    'callback-svc': 'callback-svc ready',
  };
  for (const app of Object.keys(ready)) apps[app] = new AppProcess(app, env);
  await Promise.all(Object.entries(apps).map(([app, proc]) => proc.start(ready[app], 60_000)));
  adminDb = await openAdminDatabase(database.url);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(Object.values(apps).map((p) => p.stop()));
  await receiver?.stop();
  await collector?.stop();
  await adminDb?.destroy().catch(() => undefined);
  if (busPrefix) await deleteBusStreams(busPrefix).catch(() => undefined);
  await database?.drop().catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface InterTenant {
  api: ApiClient;
  tenantId: string;
  clientId: string;
  /** The ERP's client (payer) id. */
  payerId: string;
}

/** A tenant, authenticated, with one payer registered. */
async function newTenant(name: string): Promise<InterTenant> {
  const tenant = await createTenant(adminDb, name);
  const auth = await new ApiClient(gatewayUrl).post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);
  const api = new ApiClient(gatewayUrl, auth.json.access_token);
  const payer = clientPayload();
  expect((await api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);
  return { api, tenantId: tenant.tenant_id, clientId: `e2e-${randomUUID().slice(0, 8)}`, payerId: payer.client_id };
}

/** `tenant account --provider inter` through the CLI, with a client certificate `issuer` signed; the secret comes from stdin. */
async function setInterAccount(tenant: InterTenant, issuer: TestCertificateAuthority, beneficiary: string) {
  const cert = issuer.issue({ commonName: tenant.clientId, kind: 'client' });
  const clientSecret = `secret-${randomBytes(12).toString('hex')}`;
  const files = { cert: join(dir, `${randomUUID()}.crt`), key: join(dir, `${randomUUID()}.key`) };
  writeFileSync(files.cert, cert.certPem);
  writeFileSync(files.key, cert.keyPem);
  secrets.push(clientSecret, ...pemBody(cert.keyPem));
  const run = await runAdmin(
    database.url,
    [
      ...['tenant', 'account', '--tenant', tenant.tenantId, '--provider', 'inter'],
      ...['--beneficiary-name', beneficiary, '--beneficiary-tax-id', '45.723.174/0001-10'],
      ...['--client-id', tenant.clientId, '--client-secret-file', '-'],
      ...['--cert-file', files.cert, '--key-file', files.key, '--base-url', interBaseUrl, '--json'],
    ],
    { stdin: clientSecret },
  );
  expect(run).toMatchObject({ code: 0 });
  expect(JSON.parse(run.stdout)).toMatchObject({ provider: 'inter', credentials: 'set' });
  for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret);
  // At Inter the beneficiary is the account holder: the sandbox is told who holds this client's account.
  await control('PUT', `/sandbox/inter/clients/${tenant.clientId}/holder`, {
    name: beneficiary,
    tax_id: '45.723.174/0001-10',
    city: 'Florianopolis',
    pix_key: '45723174000110',
  });
}

/** The lines of a PEM's base64 body: what a leaked key would show. */
function pemBody(pem: string): string[] {
  return pem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));
}

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandboxUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/** The Inter charges the sandbox holds for a client, of one value (each test gives its charges distinct values). */
async function interCharges(clientId: string, value: number) {
  const found = (await control('GET', `/sandbox/inter/charges?client_id=${encodeURIComponent(clientId)}`)) as {
    charges: Array<{ cobranca: { codigoSolicitacao: string; situacao: string; valorNominal: number | string } }>;
  };
  return found.charges.filter((c) => Number(c.cobranca.valorNominal) === value);
}

async function issue(tenant: InterTenant, value: number) {
  const item = receivablePayload(tenant.payerId, receiver.url, { value, items: [] });
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  return item.account_receivable_id;
}

const callbackOf = <T extends ReceivableCallback>(id: string, is: (c: ReceivableCallback) => boolean) =>
  receivableCallbacks(receiver, id).find(is) as T | undefined;
const isRegistered = (c: ReceivableCallback) => 'type' in c && c.type === 'registered';
const isPaid = (c: ReceivableCallback) => 'type' in c && c.type === 'paid';

it('registers over mutual TLS once a wrong client certificate is fixed, then pays, cancels and serves the PDF', async () => {
  const tenant = await newTenant('Inter Tenant');
  // A certificate the bank does not trust: the TLS handshake fails, the charge stays pending.
  await setInterAccount(tenant, createTestCertificateAuthority('not the bank'), 'Escola Pequeno Príncipe');
  const first = await issue(tenant, 321.09);
  await new Promise((r) => setTimeout(r, 5_000));
  expect(callbackOf(first, isRegistered)).toBeUndefined();
  expect(await interCharges(tenant.clientId, 321.09)).toEqual([]);
  const consult = await tenant.api.post<{ status_payment: string }>(
    `/api/v1/accounts-receivable/${first}/consult-transaction`,
  );
  expect(consult.json).toMatchObject({ status_payment: 'Pendente' });

  // The operator fixes the certificate (same client id: the same bank account); the pending charge registers.
  await setInterAccount(tenant, ca, 'Escola Pequeno Príncipe');
  await waitFor(() => callbackOf(first, isRegistered) !== undefined, 60_000, 'registered callback after the fix');
  const registered = callbackOf<RegisteredCallback>(first, isRegistered)!;
  expect(registered.success).toBe(true);
  const data = registered.payment_data;
  expect(barcodeProblems(data.barcode, { amountCents: 32_109 })).toEqual([]);
  expect(typeableLineProblems(data.typeable_line, data.barcode)).toEqual([]);
  expect(brCodeProblems(data.pix_copy_and_paste)).toEqual([]);
  const charges = await interCharges(tenant.clientId, 321.09);
  expect(charges).toHaveLength(1); // one boleto, however many attempts

  // The QR image and the PDF come through signed gateway links (Inter serves them only behind mTLS).
  expect(data.pdf.startsWith(`${gatewayUrl}/`)).toBe(true);
  expect(await download(data.pdf)).toMatchObject({ status: 200, magic: '%PDF-' });
  const qr = await fetch(data.qrcode_image);
  expect(qr.status).toBe(200);
  expect(decodeQrPng(Buffer.from(await qr.arrayBuffer()))).toBe(data.pix_copy_and_paste);

  // Paid at the bank: Inter's webhook, confirmed by consulting the charge, gives the paid callback.
  await control('POST', `/sandbox/charges/${charges[0].cobranca.codigoSolicitacao}/pay`, { method: 'pix' });
  await waitFor(() => callbackOf(first, isPaid) !== undefined, 30_000, 'paid callback');
  expect(callbackOf<PaidCallback>(first, isPaid)).toMatchObject({ amount_paid: 321.09, payment_type: 'Pix' });

  // Cancelled: Inter's cancel, then the cancellation callback.
  const second = await issue(tenant, 321.1);
  await waitFor(() => callbackOf(second, isRegistered) !== undefined, 30_000, 'second registered callback');
  expect((await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${second}/cancel`, undefined)).status).toBe(202);
  await waitFor(
    () => receivableCallbacks(receiver, second).some((c) => 'status' in c),
    30_000,
    'cancellation callback',
  );
  expect(receivableCallbacks(receiver, second).find((c) => 'status' in c)).toMatchObject<Partial<CancellationCallback>>(
    { status: 'success' },
  );
  expect((await interCharges(tenant.clientId, 321.1))[0].cobranca.situacao).toBe('CANCELADO');
}, 180_000);

it('pays each of two Inter accounts its own charge, by our_number (unique across the sandbox)', async () => {
  const [a, b] = [await newTenant('Inter A'), await newTenant('Inter B')];
  await setInterAccount(a, ca, 'Loja A Ltda');
  await setInterAccount(b, ca, 'Loja B Ltda');
  const [ra, rb] = [await issue(a, 10.01), await issue(b, 20.02)];
  await waitFor(
    () => [ra, rb].every((id) => callbackOf(id, isRegistered) !== undefined),
    60_000,
    'both registered callbacks',
  );
  const [ourA, ourB] = [ra, rb].map((id) => callbackOf<RegisteredCallback>(id, isRegistered)!.payment_data.our_number);
  // A real bank numbers per account; the sandbox keeps one sequence for every dialect, so its pay
  // control by our_number names one charge (and our side still keys charges by account).
  expect(ourA).not.toBe(ourB);
  for (const ourNumber of [ourA, ourB])
    expect(await control('POST', `/sandbox/charges/${ourNumber}/pay`, { method: 'boleto' })).toMatchObject({
      cobranca: { situacao: 'RECEBIDO' },
    });
  await waitFor(() => [ra, rb].every((id) => callbackOf(id, isPaid) !== undefined), 30_000, 'both paid callbacks');
  expect(callbackOf<PaidCallback>(ra, isPaid)).toMatchObject({ amount_paid: 10.01 });
  expect(callbackOf<PaidCallback>(rb, isPaid)).toMatchObject({ amount_paid: 20.02 });
  expect(receivableCallbacks(receiver, ra).filter(isPaid)).toHaveLength(1);
  expect(receivableCallbacks(receiver, rb).filter(isPaid)).toHaveLength(1);
}, 120_000);

it('writes none of the accounts\u2019 secrets to any log line or span attribute', async () => {
  expect(secrets.length).toBeGreaterThan(0);
  // Spans arrive in batches: give the last ones a moment.
  await new Promise((r) => setTimeout(r, 500));
  const logs = Object.values(apps).map((p) => p.output);
  expect(logs.join('').length).toBeGreaterThan(0);
  expect(collector.spans.length).toBeGreaterThan(0);
  const spans = JSON.stringify(collector.spans);
  for (const secret of secrets) {
    for (const output of logs) expect(output).not.toContain(secret);
    expect(spans).not.toContain(secret);
  }
  // Nor their sealed form.
  expect(logs.join('')).not.toMatch(/"v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{16,}\./);
});
