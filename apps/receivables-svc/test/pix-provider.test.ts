import { randomUUID } from 'node:crypto';
import type { InterCredentials, ProviderKind, RegistrationJob } from '@payments/contracts';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, parseKeyring } from '@payments/credential-seal';
import { PIX_DIALECTS, PIX_PATHS, cobvBody, readWebhook, txidFor, type PixDialectName } from '@payments/pix-api';
import { acceptReceivables } from '../src/domain/intake';
import { registerReceivables } from '../src/domain/registration';
import type { ChargeRequest, PaymentProvider, ProviderAccount } from '../src/domain/ports';
import type { ReceivableRow } from '../src/db/schema';
import { BankSandboxProvider } from '../src/transport/providers/bank-sandbox-provider';
import { InterProvider } from '../src/transport/providers/inter';
import { INTER_DEFAULT_LIMITS } from '../src/transport/providers/inter/client';
import { PixAccountClient, PixProvider, termsOf } from '../src/transport/providers/pix';
import { interShared, pixShared } from '../src/transport/providers/providers';
import { startInterSandbox, type InterSandbox } from './inter-sandbox';
import { accountVersion, chargeItem, row, rowById, startStateFixture, type StateFixture } from './state-fixture';

/**
 * The PIX adapter against the bank sandbox's PIX API in its own process, over mutual TLS, in both
 * dialects: the standard's (a `pix` account: its PIX API root and token URL as the integration gives
 * them) and Inter's (an `inter` account: its base URL + /pix/v2, Inter's token endpoint, x-conta-corrente).
 * The sandbox's own list of an integration's cobvs (GET /sandbox/pix/charges) is the oracle: one cobv
 * per charge, whatever failed in between; amounts and times paid are read from it, not from the adapter.
 */

interface Integration extends InterCredentials {
  pix_key: string;
  /** Inter's integrations: the checking account. */
  account?: string;
  /** Standard integrations: where their PIX API and token are. */
  pix_api_url?: string;
  token_url?: string;
}

interface SandboxCobv {
  txid: string;
  status: string;
  pixCopiaECola?: string;
  valor: { original: string };
  pix?: Array<{ endToEndId: string; valor: string; horario: string }>;
}

let sandbox: InterSandbox;
let f: StateFixture;
const closers: Array<{ close(): Promise<void> }> = [];
const keyring = parseKeyring(DEV_CREDENTIALS_ENCRYPTION_KEY, undefined);
const WEBHOOK_BASE = 'http://127.0.0.1:9';
const shared = { inter: { baseUrl: '', callLimits: INTER_DEFAULT_LIMITS, callWaitMaxMs: 10_000 } };

beforeAll(async () => {
  // With its CA's key the sandbox issues integrations, as a bank's internet banking does.
  [sandbox, f] = await Promise.all([startInterSandbox({}, { withCaKey: true }), startStateFixture()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(closers.map((c) => c.close()));
  await Promise.all([sandbox?.stop(), f?.stop()]);
});
afterEach(async () => {
  await sandbox.control('DELETE', '/sandbox/pix/faults');
});

/** A dialect's integration and the account (kind and base URL) a tenant sets with it. */
async function integration(dialect: PixDialectName): Promise<{ bank: Integration; account: ProviderAccount }> {
  const path = dialect === 'standard' ? '/sandbox/pix/integrations' : '/sandbox/inter/integrations';
  const answer = await sandbox.control('POST', path);
  if (answer.status !== 201) throw new Error(`no integration: ${JSON.stringify(answer)}`);
  const bank = answer.body as Integration;
  const id = randomUUID();
  const account: ProviderAccount = {
    id,
    tenantId: randomUUID(),
    provider: dialect === 'standard' ? 'pix' : 'inter',
    accountKey: `key-${id}`,
    beneficiary: {
      name: 'Escola Exemplo',
      tax_id: '11.222.333/0001-81',
      city: 'Curitiba',
      pix_key: bank.pix_key,
      agency: null,
      account: bank.account ?? null,
      address: null,
    },
    baseUrl: dialect === 'standard' ? (bank.pix_api_url ?? null) : sandbox.interBaseUrl,
    sealedCredentials: null,
  };
  return { bank, account };
}

/** One instance's PIX adapter of a dialect, its budgets and token shared through the fixture's database. */
function pixProvider(
  dialect: PixDialectName,
  bank: Integration,
  { onConflict }: { onConflict?: (url: string) => void } = {},
): PixProvider {
  const { account: _account, pix_key: _key, pix_api_url: _url, ...credentials } = bank;
  const provider = new PixProvider({
    dialect: PIX_DIALECTS[dialect],
    credentials: (account) => Promise.resolve({ versionId: account.id, credentials }),
    tokenKey: dialect === 'inter' ? (bankAccount) => `${bankAccount}:pix` : undefined,
    timeoutMs: 3_000,
    webhookUrl: (accountId) => `${WEBHOOK_BASE}/provider/webhooks/pix/${accountId}`,
    ownsWebhookUrl: (url) => url.startsWith(`${WEBHOOK_BASE}/provider/webhooks/pix/`),
    trustedCaPem: sandbox.ca.certPem,
    shared: pixShared(f.db, { ...shared, credentialsEncryptionKey: keyring }, PIX_DIALECTS[dialect]),
    observer: { webhookConflict: (_accountId, registered) => onConflict?.(registered) },
  });
  closers.push(provider);
  return provider;
}

/** A direct connection to the account's PIX API, as the bank's own tools would make (the test's hands). */
function directClient(dialect: PixDialectName, bank: Integration, account: ProviderAccount): PixAccountClient {
  const client = new PixAccountClient({
    dialect: PIX_DIALECTS[dialect],
    accountBaseUrl: account.baseUrl ?? '',
    credentials: bank,
    timeoutMs: 3_000,
    trustedCa: () => sandbox.ca.certPem,
    bankAccount: `direct-${randomUUID()}`,
    tokenKey: `direct-${randomUUID()}`,
    accountId: account.id,
    checkingAccount: bank.account ?? null,
  });
  closers.push(client);
  return client;
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    idempotencyKey: randomUUID(),
    providerChargeId: null,
    createMarkedAt: null,
    kind: 'pix',
    amountCents: 15_075,
    issueDate: '2026-11-23',
    dueDate: '2026-12-15',
    payer: {
      clientId: randomUUID(),
      name: 'Maria da Silva',
      taxId: '529.982.247-25',
      address: 'Rua das Flores',
      number: '123',
      neighborhood: 'Centro',
      city: 'Florianópolis',
      state: 'SC',
      zipCode: '88010-000',
      email: 'maria@example.com',
    },
    discount: null,
    fineBp: 200,
    interestPerDayCents: 5,
    instructions: [],
    descriptionLines: [{ description: 'Mensalidade', quantity: 1, priceCents: 15_075 }],
    reference: 'ERP-1',
    ...overrides,
  };
}

async function cobvsOf(clientId: string): Promise<SandboxCobv[]> {
  const answer = await sandbox.control('GET', `/sandbox/pix/charges?client_id=${clientId}`);
  return (answer.body as { charges: SandboxCobv[] }).charges;
}

async function boletosOf(clientId: string): Promise<unknown[]> {
  const answer = await sandbox.control('GET', `/sandbox/inter/charges?client_id=${clientId}`);
  return (answer.body as { charges: unknown[] }).charges;
}

const MINUTE = 60_000;

describe.each(['standard', 'inter'] as const)('the PIX adapter, %s dialect, against the sandbox', (dialect) => {
  it('registers a cobv: txid from the receivable id, the BR Code, no slip; the webhook set for the key', async () => {
    const { bank, account } = await integration(dialect);
    const request = chargeRequest();
    const [outcome] = await pixProvider(dialect, bank).registerMany(account, [request]);
    const txid = txidFor(request.idempotencyKey);
    const [cobv] = await cobvsOf(bank.client_id);
    expect(cobv).toMatchObject({ txid, status: 'ATIVA', valor: { original: '150.75' } });
    expect(outcome).toEqual({
      kind: 'registered',
      charge: {
        chargeId: txid,
        ourNumber: txid,
        barcode: '',
        typeableLine: '',
        pixCopyAndPaste: cobv.pixCopiaECola,
        qrcodeImageUrl: '',
        pdfUrl: '',
      },
    });
    expect(cobv.pixCopiaECola).toMatch(/^000201/);
    const webhook = readWebhook(
      await directClient(dialect, bank, account).get(PIX_PATHS.webhook(bank.pix_key), {}, 'webhook'),
    );
    expect(webhook.webhookUrl).toBe(`${WEBHOOK_BASE}/provider/webhooks/pix/${account.id}`);
  });

  it('consults an open cobv, then its payment with the amount and time the bank gives', async () => {
    const { bank, account } = await integration(dialect);
    const provider = pixProvider(dialect, bank);
    const request = chargeRequest();
    await provider.registerMany(account, [request]);
    const txid = txidFor(request.idempotencyKey);
    expect(await provider.consult(account, txid)).toEqual({ kind: 'open' });
    const paid = await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', amount: 149.5 });
    expect(paid.status).toBe(200);
    const [cobv] = await cobvsOf(bank.client_id);
    const [pix] = cobv.pix ?? [];
    expect(await provider.consult(account, txid)).toEqual({
      kind: 'paid',
      payment: {
        paidAt: new Date(pix.horario),
        paidAtPrecision: 'time',
        amountPaidCents: 14_950,
        feeCents: 0,
        method: 'pix',
      },
      refunds: [],
    });
    expect(pix.valor).toBe('149.50');

    // A devolução made at the bank is shown under the payment it returns.
    const refund = await sandbox.control('POST', '/sandbox/pix/refunds', { txid, amount: 20 });
    expect(refund.status).toBe(201);
    const after = await provider.consult(account, txid);
    expect(after.kind === 'paid' ? after.refunds : after.kind).toEqual([
      expect.objectContaining({ amountCents: 2_000, status: 'DEVOLVIDO', inProcess: false }),
    ]);
  });

  it('cancels: an open cobv is removed, a removed one stays so, a paid one is not open', async () => {
    const { bank, account } = await integration(dialect);
    const provider = pixProvider(dialect, bank);
    const open = chargeRequest();
    const paid = chargeRequest();
    await provider.registerMany(account, [open, paid]);
    const [openTxid, paidTxid] = [txidFor(open.idempotencyKey), txidFor(paid.idempotencyKey)];
    expect(await provider.cancel(account, openTxid, 'erp cancel')).toBe('cancelled');
    expect(await provider.consult(account, openTxid)).toEqual({ kind: 'cancelled' });
    expect(await provider.cancel(account, openTxid, 'again')).toBe('cancelled');
    await sandbox.control('POST', `/sandbox/charges/${paidTxid}/pay`, { method: 'pix' });
    expect(await provider.cancel(account, paidTxid, 'too late')).toBe('not_open');
    const statuses = Object.fromEntries((await cobvsOf(bank.client_id)).map((c) => [c.txid, c.status]));
    expect(statuses).toEqual({ [openTxid]: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', [paidTxid]: 'CONCLUIDA' });
  });

  it('a refused create with no cobv at the bank is rejected (nothing is live there)', async () => {
    const { bank, account } = await integration(dialect);
    const [outcome] = await pixProvider(dialect, bank).registerMany(account, [
      chargeRequest({ dueDate: '2020-01-10' }),
    ]);
    expect(outcome).toMatchObject({ kind: 'rejected', code: 'pix_400' });
    expect(await cobvsOf(bank.client_id)).toEqual([]);
  });

  it('a consult answering 404 right after the create is not a rejection: pending with its txid', async () => {
    const { bank, account } = await integration(dialect);
    const provider = pixProvider(dialect, bank);
    const request = chargeRequest();
    const txid = txidFor(request.idempotencyKey);
    await provider.registerMany(account, [request]);
    await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' });
    await sandbox.control('POST', '/sandbox/pix/faults', { consult_not_found_ms: 10 * MINUTE });
    expect(await provider.consult(account, txid)).toEqual({ kind: 'unknown' });
    // An attempt after the mark, with terms the bank refuses for a paid cobv: the consult does not show
    // the cobv yet, so the refusal may be about it.
    const again = { ...request, amountCents: request.amountCents + 100, createMarkedAt: new Date(Date.now() - 1_000) };
    const [outcome] = await provider.registerMany(account, [again]);
    expect(outcome).toMatchObject({ kind: 'unavailable', chargeId: txid });
    // Long after the mark, a refusal the bank answers for with nothing is a rejection.
    const late = chargeRequest({ dueDate: '2020-01-10', createMarkedAt: new Date(Date.now() - 31 * MINUTE) });
    expect((await provider.registerMany(account, [late]))[0]).toMatchObject({ kind: 'rejected', code: 'pix_400' });
    expect(await cobvsOf(bank.client_id)).toHaveLength(1);
  });

  it('a create whose answer was lost, then the job again in a new process: one cobv, registered', async () => {
    const { bank, account } = await integration(dialect);
    const request = chargeRequest();
    const txid = txidFor(request.idempotencyKey);
    // The first attempt's PUT reached the bank; its answer never came back (the process died).
    const body = cobvBody(termsOf(request, txid, bank.pix_key), PIX_DIALECTS[dialect]);
    await directClient(dialect, bank, account).call({
      method: 'PUT',
      path: PIX_PATHS.cobv(txid),
      json: body,
      what: 'create',
    });
    // The next attempt, anywhere, finds the mark: it consults before it creates.
    const marked = { ...request, createMarkedAt: new Date(Date.now() - 5_000) };
    const next = pixProvider(dialect, bank);
    const [outcome] = await next.registerMany(account, [marked]);
    expect(outcome).toMatchObject({ kind: 'registered', charge: { chargeId: txid } });
    // Even an attempt that knew of no mark sends the same txid: the same charge, not a second one.
    const [unmarked] = await next.registerMany(account, [request]);
    expect(unmarked).toMatchObject({ kind: 'registered', charge: { chargeId: txid } });
    expect((await cobvsOf(bank.client_id)).map((c) => c.txid)).toEqual([txid]);
  });
});

describe("the PIX key's webhook", () => {
  it('another URL set for the key is kept (and told) unless the account says replace', async () => {
    const { bank, account } = await integration('standard');
    const direct = directClient('standard', bank, account);
    const theirs = 'https://erp.example.com/their-own-pix-webhook';
    await direct.call({
      method: 'PUT',
      path: PIX_PATHS.webhook(bank.pix_key),
      json: { webhookUrl: theirs },
      what: 'set',
    });
    const conflicts: string[] = [];
    const kept = pixProvider('standard', bank, { onConflict: (url) => conflicts.push(url) });
    expect((await kept.registerMany(account, [chargeRequest()]))[0]).toMatchObject({ kind: 'registered' });
    const webhookNow = async () =>
      readWebhook(await direct.get(PIX_PATHS.webhook(bank.pix_key), {}, 'webhook')).webhookUrl;
    expect(await webhookNow()).toBe(theirs);
    expect(conflicts).toEqual([theirs]);
    const replacing = pixProvider('standard', { ...bank, replace_webhook: true });
    await replacing.registerMany(account, [chargeRequest()]);
    expect(await webhookNow()).toBe(`${WEBHOOK_BASE}/provider/webhooks/pix/${account.id}`);
  });
});

describe('an inter account: PIX charges at its PIX API, slips at its Cobrança API', () => {
  function interProvider(bank: Integration): InterProvider {
    const { account: _account, pix_key: _key, ...credentials } = bank;
    const opened = (account: ProviderAccount) => Promise.resolve({ versionId: account.id, credentials });
    const provider = new InterProvider({
      credentials: opened,
      defaultBaseUrl: sandbox.interBaseUrl,
      timeoutMs: 3_000,
      webhookUrl: (accountId) => `${WEBHOOK_BASE}/provider/webhooks/inter/${accountId}`,
      trustedCaPem: sandbox.ca.certPem,
      shared: interShared(f.db, { ...shared, credentialsEncryptionKey: keyring }),
      issuePollMs: [0, 300],
      pix: pixProvider('inter', bank),
    });
    closers.push(provider);
    return provider;
  }

  it('a mixed batch makes one boleto and one cobv; consult and cancel go by the charge id', async () => {
    const { bank, account } = await integration('inter');
    const inter = interProvider(bank);
    const slip = chargeRequest({ kind: 'hybrid_slip' });
    const pixCharge = chargeRequest();
    const [slipOutcome, pixOutcome] = await inter.registerMany(account, [slip, pixCharge]);
    const txid = txidFor(pixCharge.idempotencyKey);
    expect(pixOutcome).toMatchObject({ kind: 'registered', charge: { chargeId: txid, barcode: '', pdfUrl: '' } });
    expect(slipOutcome).toMatchObject({ kind: 'registered' });
    if (slipOutcome.kind !== 'registered') throw new Error('slip not registered');
    expect(slipOutcome.charge.barcode).toMatch(/^\d{44}$/);
    // The PIX charge made no boleto: the only boleto is the slip's.
    expect(await boletosOf(bank.client_id)).toHaveLength(1);
    expect((await cobvsOf(bank.client_id)).map((c) => c.txid)).toEqual([txid]);
    expect(await inter.consult(account, txid)).toEqual({ kind: 'open' });
    expect(await inter.consult(account, slipOutcome.charge.chargeId)).toEqual({ kind: 'open' });
    expect(await inter.cancel(account, txid, 'erp cancel')).toBe('cancelled');
    expect(await inter.consult(account, slipOutcome.charge.chargeId)).toEqual({ kind: 'open' });
    await expect(inter.slipPdf(account, txid)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('its PIX token is not its Cobrança token, under one token budget', async () => {
    const { bank, account } = await integration('inter');
    await interProvider(bank).registerMany(account, [chargeRequest({ kind: 'hybrid_slip' }), chargeRequest()]);
    const tokens = await f.db.selectFrom('bank_tokens').selectAll().execute();
    const keys = tokens.map((t) => t.bank_account);
    const bankAccount = `${account.tenantId}:${account.accountKey}`;
    expect(keys).toEqual(expect.arrayContaining([bankAccount, `${bankAccount}:pix`]));
  });
});

describe('registration of a pix account end to end (intake, mark, adapter, results)', () => {
  function deps(kind: ProviderKind, provider: PaymentProvider) {
    const sandboxProvider = new BankSandboxProvider({ baseUrl: sandbox.url, apiKey: 'k', timeoutMs: 500, retries: 0 });
    return {
      db: f.db,
      providers: { sandbox: sandboxProvider, inter: sandboxProvider, pix: sandboxProvider, [kind]: provider },
      accounts: f.accounts,
      slipLinks: f.slipLinks,
      logger: f.logger,
    };
  }

  it('registers with the BR Code, a gateway QR link, no PDF and our_number = txid', async () => {
    const { bank, account } = await integration('standard');
    const tenantId = randomUUID();
    const version = {
      ...accountVersion(tenantId, 'pix', { pix_key: bank.pix_key, account: null }),
      base_url: account.baseUrl,
    };
    const item = chargeItem(f.clients.add(tenantId), { payment_method: 3 });
    await acceptReceivables(f.db, f.clients, tenantId, version, [item]);
    const r: ReceivableRow = await row(f, tenantId, item.account_receivable_id);
    const job: RegistrationJob = { tenant_id: tenantId, receivable_ids: [r.id] };
    expect(await registerReceivables(deps('pix', pixProvider('standard', bank)), job, 1)).toBe('done');
    const registered = await rowById(f, r.id);
    const [cobv] = await cobvsOf(bank.client_id);
    expect(registered).toMatchObject({
      registration_status: 'registered',
      provider_charge_id: txidFor(r.id),
      our_number: txidFor(r.id),
      typeable_line: '',
      barcode: '',
      pdf_url: '',
      pix_copy_and_paste: cobv.pixCopiaECola,
    });
    expect(registered.qrcode_image_url).toMatch(/^https:\/\/api\.example\.com\/.*\?expires=\d+&signature=/);
  });
});
