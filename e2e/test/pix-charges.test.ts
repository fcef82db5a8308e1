import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CancellationCallback, PaidCallback, Problem, RegisteredCallback } from '@payments/contracts';
import { dynamicPixBrCodeProblems } from '@payments/test-support/br-code';
import { decodeQrPng } from '@payments/test-support/slip-checks';
import { setProviderAccount } from '../support/admin-cli';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import { InterBankControls, setInterAccount } from '../support/inter-bank';
import {
  centsOf,
  DESCONTO,
  JUROS,
  MULTA,
  PixApi,
  PixBankControls,
  pixSandboxTls,
  setPixAccount,
  TXID_PATTERN,
  type Beneficiary,
  type Cobv,
  type PixIntegration,
} from '../support/pix-bank';
import { receivableCallbacks } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * PIX charges with a due date (cobv) at the tenant's bank, from outside: an operator sets the account
 * with the admin CLI, an ERP issues, cancels, searches and is called back, and the bank (the sandbox,
 * through its PIX API and its controls) takes the payments and devoluções. The oracle is the bank's
 * own view (GET /sandbox/pix/charges, GET /cobv/{txid}), the BR Code read independently, and the
 * callbacks the ERP's receiver got.
 */

let system: TestSystem;
let receiver: CallbackReceiver;
let bank: PixBankControls;
let inter: InterBankControls;
let dir: string;
let caPem: string;
let interBaseUrl: string;

/** The holder of the `pix` account: a name longer than a BR Code's 25 characters, with accents. */
const BENEFICIARY: Beneficiary = { name: 'Escola de Música Pequeno Príncipe Ltda', taxId: '45.723.174/0001-10' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pix-charges-'));
  const tls = await pixSandboxTls(dir);
  caPem = tls.caPem;
  interBaseUrl = tls.interBaseUrl;
  system = await startSystem({
    withReceivables: true,
    env: {
      ...tls.env,
      BANK_SANDBOX_INTER_NOTICE_RETRY_MS: '500,1000,2000,4000',
      PROVIDER_TIMEOUT_MS: '3000',
      CALLBACK_POLL_INTERVAL_MS: '100',
    },
  });
  receiver = await new CallbackReceiver().start();
  if (!system.sandboxUrl) throw new Error('the system started without its bank sandbox');
  bank = new PixBankControls(system.sandboxUrl);
  inter = new InterBankControls(system.sandboxUrl);
}, 120_000);

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface PixTenant {
  tenant: TestTenant;
  integration: PixIntegration;
  payerId: string;
}

/** One tenant on a `pix` account (set once, through the admin CLI), with one payer. */
let pixTenantOnce: Promise<PixTenant> | undefined;
function pixTenant(): Promise<PixTenant> {
  pixTenantOnce ??= (async () => {
    const tenant = await system.newTenant('Escola Pix');
    const integration = await bank.newIntegration();
    // At a bank the BR Code's merchant is the account holder: the bank is told who holds it.
    await bank.setHolder(integration.client_id, {
      name: BENEFICIARY.name,
      tax_id: BENEFICIARY.taxId,
      city: 'Florianopolis',
      pix_key: integration.pix_key,
    });
    expect(await setPixAccount(system.databaseUrl, dir, tenant.tenantId, integration, BENEFICIARY)).toMatchObject({
      provider: 'pix',
    });
    return { tenant, integration, payerId: await newPayer(tenant) };
  })();
  return pixTenantOnce;
}

async function newPayer(tenant: TestTenant): Promise<string> {
  const payer = clientPayload({ name: 'Maria Pagadora' });
  expect((await tenant.api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);
  return payer.client_id;
}

/** A PIX charge (payment_method 3) issued today, due in 10 days, with no items to print. */
function pixCharge(payerId: string, overrides: Record<string, unknown> = {}) {
  return receivablePayload(payerId, receiver.url, {
    payment_method: 3,
    items: [],
    emission_date: brasiliaDate(),
    due_date: brasiliaDate(10),
    ...overrides,
  });
}

const callbacksOf = (id: string) => receivableCallbacks(receiver, id);
const registeredOf = (id: string) =>
  callbacksOf(id).find((c): c is RegisteredCallback => 'type' in c && c.type === 'registered');
const paidOf = (id: string) => callbacksOf(id).find((c): c is PaidCallback => 'type' in c && c.type === 'paid');

async function waitRegistered(id: string): Promise<RegisteredCallback> {
  await waitFor(() => registeredOf(id) !== undefined, 30_000, `the registered callback of ${id}`);
  const registered = registeredOf(id);
  if (!registered?.success) throw new Error(`${id} was not registered: ${JSON.stringify(registered)}`);
  return registered;
}

/** Issues one charge; once registered, its id, its txid (the our_number the ERP was told) and its payment data. */
async function issue(tenant: TestTenant, item: ReturnType<typeof pixCharge>) {
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  const { payment_data: data } = await waitRegistered(item.account_receivable_id);
  expect(data.our_number).toMatch(TXID_PATTERN);
  return { id: item.account_receivable_id, txid: data.our_number, data };
}

async function waitPaid(id: string, timeoutMs = 30_000): Promise<PaidCallback> {
  await waitFor(() => paidOf(id) !== undefined, timeoutMs, `the paid callback of ${id}`);
  return paidOf(id) as PaidCallback;
}

async function cobvAtBank(clientId: string, txid: string): Promise<Cobv> {
  const found = (await bank.charges(clientId)).filter((c) => c.txid === txid);
  if (found.length !== 1) throw new Error(`${found.length} cobv with txid ${txid} at the bank`);
  return found[0];
}

/** A UTC instant as Brasília civil time without a zone, to the second (Brazil keeps UTC-3 all year). */
function brasiliaTime(instant: string): string {
  return new Date(Date.parse(instant) - 3 * 3_600_000).toISOString().slice(0, 19);
}

async function search(tenant: TestTenant, state: string) {
  const res = await tenant.api.postIdempotent<Array<{ accounts_receivable_id: string }>>(
    '/api/v1/accounts-receivable/search',
    { state, start_date: brasiliaDate(-1), end_date: brasiliaDate(1) },
  );
  expect(res.status).toBe(200);
  return res.json;
}

it('a pix account end to end: a cobv whose BR Code decodes, paid at the bank, found by search and consult', async () => {
  const { tenant, integration, payerId } = await pixTenant();
  const item = pixCharge(payerId, { value: 123.45 });
  const { id, txid, data } = await issue(tenant, item);
  expect(data).toMatchObject({ typeable_line: '', barcode: '', pdf: '' });

  // The bank holds one cobv with the charge's terms, and the ERP got its very BR Code.
  const cobv = await cobvAtBank(integration.client_id, txid);
  expect(cobv).toMatchObject({
    status: 'ATIVA',
    chave: integration.pix_key,
    calendario: { dataDeVencimento: item.due_date },
    valor: { original: '123.45' },
    // The payer, as the client was registered (its CPF in digits).
    devedor: { cpf: '52998224725', nome: 'Maria Pagadora' },
  });
  expect(data.pix_copy_and_paste).toBe(cobv.pixCopiaECola);
  const location = cobv.loc?.location ?? cobv.location;
  expect(location).toBeDefined();
  expect(dynamicPixBrCodeProblems(data.pix_copy_and_paste, { merchantName: BENEFICIARY.name, location })).toEqual([]);

  // The ERP can read the payment data back from the registered event (GET /api/v1/callbacks/{webhook-id}).
  const delivery = receiver.received.find(
    (r) => (JSON.parse(r.body) as { accounts_receivable_id?: string }).accounts_receivable_id === id,
  );
  const event = await tenant.api.send<{ event_type: string; payload: RegisteredCallback }>(
    'GET',
    `/api/v1/callbacks/${delivery?.headers['webhook-id']}`,
  );
  expect(event.status).toBe(200);
  expect(event.json).toMatchObject({ event_type: 'receivable.registered', payload: { payment_data: data } });

  // The QR image is a gateway link a phone's camera reads back to the same text.
  const qr = await fetch(data.qrcode_image);
  expect(qr.status).toBe(200);
  expect(qr.headers.get('content-type')).toContain('image/png');
  expect(decodeQrPng(Buffer.from(await qr.arrayBuffer()))).toBe(data.pix_copy_and_paste);

  // The tenant's other tools see the same cobv through the bank's PIX API.
  const api = new PixApi(integration, caPem);
  try {
    expect(await api.cobv(txid)).toMatchObject({ status: 200, body: { txid, status: 'ATIVA' } });
    // The bank was told where to send the key's notices: receivables-svc's PIX webhook for this account.
    const webhook = await api.webhook(integration.pix_key);
    expect(webhook.status).toBe(200);
    expect(webhook.body.webhookUrl).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${system.env.RECEIVABLES_PORT}/provider/webhooks/pix/[^/]+$`),
    );
  } finally {
    await api.close();
  }

  // Paid at the bank: the amount and the time are the bank's.
  expect((await bank.pay(txid)).status).toBe(200);
  const paid = await waitPaid(id);
  const settled = await cobvAtBank(integration.client_id, txid);
  expect(settled.status).toBe('CONCLUIDA');
  const [pix] = settled.pix ?? [];
  expect(centsOf(pix?.valor)).toBe(12_345);
  expect(paid).toMatchObject({ amount_paid: 123.45, payment_type: 'Pix' });
  expect(paid.payment_date?.slice(0, 19)).toBe(brasiliaTime(pix.horario));
  expect(callbacksOf(id).filter((c) => 'type' in c && c.type === 'paid')).toHaveLength(1);

  const consult = await tenant.api.post<{ status_payment: string; amount_paid: number; payment_type: string }>(
    `/api/v1/accounts-receivable/${id}/consult-transaction`,
  );
  expect(consult.status).toBe(200);
  expect(consult.json).toMatchObject({ status_payment: 'Aprovada', amount_paid: 123.45, payment_type: 'Pix' });
  expect((await search(tenant, 'approved')).map((s) => s.accounts_receivable_id)).toContain(id);
}, 90_000);

it('a pix account refuses a slip charge with 422 slip_not_supported, storing nothing of the batch', async () => {
  const { tenant, payerId } = await pixTenant();
  const pix = pixCharge(payerId, { value: 11.11 });
  const slip = pixCharge(payerId, { value: 22.22, payment_method: 1 });
  const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [pix, slip]);
  expect(res.status).toBe(422);
  expect(res.json).toMatchObject({ code: 'slip_not_supported' });
  expect(res.json.errors?.map((e) => e.path)).toEqual(['/1/payment_method']);

  const all = (await search(tenant, 'all')).map((s) => s.accounts_receivable_id);
  expect(all).not.toContain(pix.account_receivable_id);
  expect(all).not.toContain(slip.account_receivable_id);
  for (const id of [pix.account_receivable_id, slip.account_receivable_id])
    expect((await tenant.api.post(`/api/v1/accounts-receivable/${id}/consult-transaction`)).status).toBe(404);
});

it('an inter account issues a PIX charge as a cobv and no boleto; without a PIX key it refuses one (422 pix_key_required)', async () => {
  const tenant = await system.newTenant('Loja Inter Pix');
  const integration = await inter.newIntegration();
  await setInterAccount(system.databaseUrl, dir, tenant.tenantId, integration, interBaseUrl);
  // The account's holder at the bank: the beneficiary setInterAccount names.
  await bank.setHolder(integration.client_id, {
    name: 'Escola Caos Controlado',
    tax_id: '45.723.174/0001-10',
    city: 'Florianopolis',
    pix_key: integration.pix_key,
  });
  const payerId = await newPayer(tenant);
  const item = pixCharge(payerId, { value: 45.67 });
  const { txid, data } = await issue(tenant, item);
  expect(data).toMatchObject({ typeable_line: '', barcode: '' });

  // One cobv at the bank, with the ERP's BR Code; no boleto of any value for this integration.
  const cobv = await cobvAtBank(integration.client_id, txid);
  expect(cobv).toMatchObject({ status: 'ATIVA', chave: integration.pix_key, valor: { original: '45.67' } });
  expect(data.pix_copy_and_paste).toBe(cobv.pixCopiaECola);
  expect(
    dynamicPixBrCodeProblems(data.pix_copy_and_paste, {
      merchantName: 'Escola Caos Controlado',
      location: cobv.loc?.location ?? cobv.location,
    }),
  ).toEqual([]);
  expect(await bank.boletos(integration.client_id)).toEqual([]);

  // The same bank, an account set without --pix-key: a PIX charge cannot be issued, nothing is stored.
  const bare = await system.newTenant('Loja Inter sem chave');
  const bareIntegration = await inter.newIntegration();
  await setProviderAccount(
    system.databaseUrl,
    [
      ...['--tenant', bare.tenantId, '--provider', 'inter'],
      ...['--beneficiary-name', 'Loja Sem Chave', '--beneficiary-tax-id', '45.723.174/0001-10'],
      ...['--account', bareIntegration.account, '--client-id', bareIntegration.client_id],
      ...['--client-secret-file', '-', '--base-url', interBaseUrl],
      ...certificateFiles(bareIntegration.cert_pem, bareIntegration.key_pem),
    ],
    bareIntegration.client_secret,
  );
  const barePayer = await newPayer(bare);
  const refused = pixCharge(barePayer, { value: 45.68 });
  const res = await bare.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [refused]);
  expect(res.status).toBe(422);
  expect(res.json).toMatchObject({ code: 'pix_key_required' });
  expect(res.json.errors?.map((e) => e.path)).toEqual(['/0/payment_method']);
  expect(await search(bare, 'all')).toEqual([]);
}, 90_000);

it('cancels a PIX charge: the cancellation callback, and the cobv removed by its receiver at the bank', async () => {
  const { tenant, integration, payerId } = await pixTenant();
  const { id, txid } = await issue(tenant, pixCharge(payerId, { value: 33.33 }));
  expect((await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${id}/cancel`, undefined)).status).toBe(202);
  await waitFor(() => callbacksOf(id).some((c) => 'status' in c), 30_000, 'the cancellation callback');
  expect(callbacksOf(id).find((c) => 'status' in c)).toMatchObject<Partial<CancellationCallback>>({
    status: 'success',
  });
  expect((await cobvAtBank(integration.client_id, txid)).status).toBe('REMOVIDA_PELO_USUARIO_RECEBEDOR');
  // Nothing left to pay at the bank.
  expect((await bank.pay(txid)).status).toBe(409);
});

it("maps fine, interest and discount to the standard's modalities; the bank charges each by independent arithmetic", async () => {
  const { tenant, integration, payerId } = await pixTenant();
  // R$ 250.00 (and R$ 250.01) due in 10 days, 2% fine, R$ 0.07 a day of interest, R$ 12.34 off until the due date.
  const terms = (value: number) =>
    pixCharge(payerId, {
      value,
      due_date: brasiliaDate(10),
      fine_value: 2,
      interest_amount: 0.07,
      discount_type: 'ValorFixoAteDataInformada',
      discount_value: 12.34,
      discount_date: brasiliaDate(10),
    });
  const [early, late] = [await issue(tenant, terms(250)), await issue(tenant, terms(250.01))];
  const cobv = await cobvAtBank(integration.client_id, early.txid);
  expect(cobv.calendario).toMatchObject({ dataDeVencimento: brasiliaDate(10), validadeAposVencimento: 60 });
  expect(cobv.valor).toMatchObject({
    original: '250.00',
    multa: { modalidade: MULTA.percentage, valorPerc: '2.00' },
    juros: { modalidade: JUROS.amountPerCalendarDay, valorPerc: '0.07' },
    desconto: {
      modalidade: DESCONTO.fixedAmountUntilDates,
      descontoDataFixa: [{ data: brasiliaDate(10), valorPerc: '12.34' }],
    },
  });

  // Paid today, before the discount's date: 250.00 - 12.34, no fine, no interest.
  const earlyDue = 25_000 - 1_234;
  // Paid 3 days after the due date: no discount, the fine once (2% of 250.01 = 5.0002, to the cent
  // 5.00) and 3 days of R$ 0.07.
  const lateDue = 25_001 + Math.round(25_001 * 0.02) + 3 * 7;
  expect((await bank.pay(early.txid)).status).toBe(200);
  expect((await bank.pay(late.txid, { paidOn: brasiliaDate(13) })).status).toBe(200);
  const [earlyPaid, latePaid] = [await waitPaid(early.id), await waitPaid(late.id)];
  expect(centsOf(earlyPaid.amount_paid)).toBe(earlyDue);
  expect(centsOf(latePaid.amount_paid)).toBe(lateDue);

  // The bank's own account of each PIX agrees, component by component.
  const [earlyPix] = (await cobvAtBank(integration.client_id, early.txid)).pix ?? [];
  expect(centsOf(earlyPix?.valor)).toBe(earlyDue);
  expect(earlyPix?.componentesValor).toMatchObject({ original: { valor: '250.00' }, desconto: { valor: '12.34' } });
  const [latePix] = (await cobvAtBank(integration.client_id, late.txid)).pix ?? [];
  expect(centsOf(latePix?.valor)).toBe(lateDue);
  expect(latePix?.componentesValor).toMatchObject({
    original: { valor: '250.01' },
    multa: { valor: '5.00' },
    juros: { valor: '0.21' },
  });
  expect(centsOf(latePix?.componentesValor?.desconto?.valor ?? '0.00')).toBe(0);
});

it('a PIX below what is due is recorded as the bank received it', async () => {
  const { tenant, integration, payerId } = await pixTenant();
  const { id, txid } = await issue(tenant, pixCharge(payerId, { value: 123.46 }));
  expect((await bank.pay(txid, { amount: 100 })).status).toBe(200);
  expect(await waitPaid(id)).toMatchObject({ amount_paid: 100, payment_type: 'Pix' });
  const [pix] = (await cobvAtBank(integration.client_id, txid)).pix ?? [];
  expect(pix?.valor).toBe('100.00');
});

it("shows a devolução made at the bank in the charge's history", async () => {
  const { tenant, integration, payerId } = await pixTenant();
  const { id, txid } = await issue(tenant, pixCharge(payerId, { value: 77.5 }));
  expect((await bank.pay(txid)).status).toBe(200);
  await waitPaid(id);

  const refund = await bank.refund(txid, 20);
  expect(refund).toMatchObject({ valor: '20.00' });
  const [pix] = (await cobvAtBank(integration.client_id, txid)).pix ?? [];
  expect(pix?.devolucoes?.map((d) => d.id)).toContain(refund.id);

  const historyPath = `/api/v1/accounts-receivable/${id}/history`;
  type History = { items: Array<{ from_state: string | null; to_state: string; reason: string }> };
  let history: History = { items: [] };
  await waitFor(
    async () => {
      history = (await tenant.api.send<History>('GET', historyPath)).json;
      return history.items.some((h) => /devolu|refund/i.test(h.reason));
    },
    30_000,
    "the devolução in the charge's history",
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the history: ${JSON.stringify(history.items)}`);
  });
  const entry = history.items.find((h) => /devolu|refund/i.test(h.reason));
  expect(entry?.reason).toMatch(/20[.,]00/);
  // The money went back at the bank: the charge stays as the bank settled it, paid.
  expect(entry).toMatchObject({ from_state: 'approved', to_state: 'approved' });
});

/** --cert-file and --key-file arguments, the PEMs written to the test's directory. */
function certificateFiles(certPem: string, keyPem: string): string[] {
  const stamp = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const [cert, key] = [join(dir, `${stamp}.crt`), join(dir, `${stamp}.key`)];
  writeFileSync(cert, certPem);
  writeFileSync(key, keyPem, { mode: 0o600 });
  return ['--cert-file', cert, '--key-file', key];
}
