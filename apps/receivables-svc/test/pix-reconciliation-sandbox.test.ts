import { randomUUID } from 'node:crypto';
import type { InterCredentials, ProviderAccountVersion } from '@payments/contracts';
import { createMetricsRegistry } from '@payments/metrics';
import { PIX_DIALECTS, txidFor } from '@payments/pix-api';
import type { ReceivableRow } from '../src/db/schema';
import { acceptReceivables } from '../src/domain/intake';
import { applyDueNotices } from '../src/domain/notices';
import type { PaymentProvider, PaymentProviders } from '../src/domain/ports';
import { registerReceivables } from '../src/domain/registration';
import { InterProvider } from '../src/transport/providers/inter';
import { PixProvider } from '../src/transport/providers/pix';
import { paymentMetrics } from '../src/transport/metrics';
import { startInterSandbox, type InterSandbox } from './inter-sandbox';
import {
  acceptAndRegister,
  accountVersion,
  callbacksFor,
  chargeItem,
  history,
  noticesDueNow,
  reconcileAllNow,
  row,
  rowById,
  serveProviderWebhooks,
  startStateFixture,
  TZ,
  type StateFixture,
} from './state-fixture';

// PIX charges' notices and reconciliation against the bank sandbox's PIX API (standard dialect, in its
// own process, mutual TLS): the sandbox pays, returns (devolução) and lets expire as a bank would, posts
// its notices to our webhook server or drops them when told to, and lists what it received. Our side
// runs as the service does: the PIX adapter, the webhook route, the reconciler's sweep and the notice
// worker, on a real Postgres. The sandbox's own view of each cobv is the oracle for amounts and times.

interface Integration extends InterCredentials {
  pix_key: string;
  pix_api_url: string;
  token_url: string;
}

interface SandboxCobv {
  txid: string;
  status: string;
  pix?: Array<{ endToEndId: string; valor: string; horario: string }>;
}

let sandbox: InterSandbox;
let f: StateFixture;
let webhooks: { port: number; stop(): Promise<void> };
/** Each tenant's integration at the sandbox (its own PIX key, whose webhook points at its account), by account id. */
const integrations = new Map<string, Integration>();
let pix: PixProvider;
let providers: PaymentProviders;
const metrics = createMetricsRegistry('receivables-test');
const payments = paymentMetrics(metrics);

/** The adapters of the kinds this file does not use: never called. */
const unused: PaymentProvider = {
  registerMany: () => Promise.reject(new Error('not used here')),
  cancel: () => Promise.reject(new Error('not used here')),
  consult: () => Promise.reject(new Error('not used here')),
  slipPdf: () => Promise.reject(new Error('not used here')),
};

beforeAll(async () => {
  [sandbox, f] = await Promise.all([startInterSandbox({}, { withCaKey: true }), startStateFixture()]);
  webhooks = await serveProviderWebhooks(f, { metrics, paymentMetrics: payments });
  pix = new PixProvider({
    dialect: PIX_DIALECTS.standard,
    credentials: (account) => {
      const found = integrations.get(account.id);
      if (!found) return Promise.reject(new Error(`provider account ${account.id} has no integration`));
      const { pix_key: _key, pix_api_url: _url, ...credentials } = found;
      return Promise.resolve({ versionId: account.id, credentials });
    },
    timeoutMs: 5_000,
    webhookUrl: (accountId) => `http://127.0.0.1:${webhooks.port}/provider/webhooks/pix/${accountId}`,
    trustedCaPem: sandbox.ca.certPem,
  });
  providers = { sandbox: unused, inter: unused, pix };
}, 60_000);
afterAll(async () => {
  await pix?.close();
  await webhooks?.stop();
  await Promise.all([sandbox?.stop(), f?.stop()]);
});
afterEach(async () => {
  await sandbox.control('DELETE', '/sandbox/pix/faults');
});

/** Each tenant's account version, by tenant. */
const versions = new Map<string, ProviderAccountVersion>();

/**
 * A PIX charge registered at the sandbox: of a new tenant whose `pix` account is a new integration, or
 * of the tenant (and account) of `sibling`.
 */
async function registered(sibling?: ReceivableRow): Promise<ReceivableRow> {
  const tenantId = sibling?.tenant_id ?? randomUUID();
  const version = versions.get(tenantId) ?? (await newAccount(tenantId));
  const item = chargeItem(f.clients.add(tenantId), { payment_method: 3 });
  const registeredRow = await acceptAndRegister(f, providers, tenantId, version, item);
  expect(registeredRow.provider_charge_id).toBe(txidFor(registeredRow.id));
  return registeredRow;
}

/** A `pix` account of the tenant on a new sandbox integration (its own PIX key and webhook). */
async function newAccount(tenantId: string): Promise<ProviderAccountVersion> {
  const answer = await sandbox.control('POST', '/sandbox/pix/integrations');
  if (answer.status !== 201) throw new Error(`no integration: ${JSON.stringify(answer)}`);
  const bank = answer.body as Integration;
  const version = { ...accountVersion(tenantId, 'pix', { pix_key: bank.pix_key }), base_url: bank.pix_api_url };
  integrations.set(version.account_id, bank);
  versions.set(tenantId, version);
  return version;
}

/** One reconciliation round as the service runs it (every account with open charges), then the worker. */
async function reconcileAndApply(): Promise<void> {
  await reconcileAllNow(f, providers);
  await apply();
}

async function apply(): Promise<void> {
  await noticesDueNow(f);
  await applyDueNotices(
    { db: f.db, providers, accounts: f.accounts, timeZone: TZ, logger: f.logger, observer: payments },
    500,
  );
}

async function noticesOf(chargeId: string) {
  return f.db.selectFrom('bank_notice_log').selectAll().where('charge_id', '=', chargeId).orderBy('id').execute();
}

/** Waits until the sandbox's notices about `txid` reached our webhook (`count` of them stored). */
async function noticesArrive(txid: string, count: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await noticesOf(txid)).length < count) {
    if (Date.now() > deadline) throw new Error(`the sandbox's notices about ${txid} did not arrive`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function cobvAtTheBank(r: ReceivableRow): Promise<SandboxCobv> {
  const txid = txidFor(r.id);
  const bank = integrations.get(r.provider_account_id ?? '');
  const answer = await sandbox.control('GET', `/sandbox/pix/charges?client_id=${bank?.client_id}`);
  const found = (answer.body as { charges: SandboxCobv[] }).charges.find((c) => c.txid === txid);
  if (!found) throw new Error(`no cobv ${txid} at the sandbox`);
  return found;
}

const paidCallbacks = async (r: ReceivableRow) =>
  (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid');

describe('PIX charges at the sandbox: notices, reconciliation and devoluções', () => {
  it('finds a payment whose notice was lost with the next sweep, with the amount and instant of the bank', async () => {
    const r = await registered();
    const txid = txidFor(r.id);
    await sandbox.control('POST', '/sandbox/pix/faults', { drop_webhooks: true });
    const paid = await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix', amount: 149.5 });
    expect(paid.status).toBe(200);
    await apply();
    expect((await rowById(f, r.id)).state).toBe('pending');

    await reconcileAndApply();
    const [received] = (await cobvAtTheBank(r)).pix ?? [];
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect(Number(after.amount_paid_cents)).toBe(14_950);
    expect(after.payment_date?.toISOString()).toBe(new Date(received?.horario ?? '').toISOString());
    expect(await noticesOf(txid)).toEqual([expect.objectContaining({ source: 'list', outcome: 'approved' })]);
    await reconcileAndApply();
    expect(await paidCallbacks(r)).toHaveLength(1);
  });

  it('applies the webhook notice once the consult confirms it, and the sweep that sees it again counts it once', async () => {
    const r = await registered();
    const txid = txidFor(r.id);
    expect((await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' })).status).toBe(200);
    await noticesArrive(txid, 1);
    await apply();
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect(Number(after.amount_paid_cents)).toBe(Number(r.amount_cents));
    expect((await noticesOf(txid))[0]).toMatchObject({ source: 'webhook', outcome: 'approved' });

    await reconcileAndApply();
    expect(await paidCallbacks(r)).toHaveLength(1);
    expect((await history(f, r.id)).filter((h) => h.to_state === 'approved')).toHaveLength(1);
  });

  it('writes a devolução made at the bank in the history once, from its notice or the list, state and amount untouched', async () => {
    const r = await registered();
    await registered(r); // an open charge of the same account: the account is swept
    const txid = txidFor(r.id);
    await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' });
    await noticesArrive(txid, 1);
    await apply();
    const refund = await sandbox.control('POST', '/sandbox/pix/refunds', { txid, amount: 20 });
    expect(refund.status).toBe(201);
    const { id, status } = refund.body as { id: string; status: string };
    await noticesArrive(txid, 3); // the payment again, and its devolução
    await apply();
    await reconcileAndApply();
    await reconcileAndApply();

    const after = await rowById(f, r.id);
    expect(after.state).toBe('approved');
    expect(Number(after.amount_paid_cents)).toBe(Number(r.amount_cents));
    const entries = (await history(f, r.id)).filter((h) => h.reason.startsWith('devolução'));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ from_state: 'approved', to_state: 'approved' });
    expect(entries[0]?.reason).toMatch(
      new RegExp(`^devolução ${id} of R\\$ 20,00 at the bank, status (${status}|DEVOLVIDO)$`),
    );
    expect(await paidCallbacks(r)).toHaveLength(1);
  });

  it('cancels a cobv the bank removed at the end of its validity (REMOVIDA_PELO_PSP), with one callback', async () => {
    const r = await registered();
    const txid = txidFor(r.id);
    expect((await sandbox.control('POST', `/sandbox/pix/charges/${txid}/expire`)).status).toBe(200);
    await reconcileAndApply();
    expect((await rowById(f, r.id)).state).toBe('cancelled');
    expect((await history(f, r.id)).at(-1)?.reason).toContain('REMOVIDA_PELO_PSP');
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.cancelled')).toHaveLength(1);
  });
});

describe("an Inter account's boleto paid by PIX, in its PIX API's received list", () => {
  const interCredentials = new Map<string, InterCredentials>();
  let inter: InterProvider;
  let interProviders: PaymentProviders;

  beforeAll(() => {
    const credentials = (account: { id: string }) => {
      const found = interCredentials.get(account.id);
      if (!found) return Promise.reject(new Error(`provider account ${account.id} has no integration`));
      return Promise.resolve({ versionId: account.id, credentials: found });
    };
    inter = new InterProvider({
      credentials,
      defaultBaseUrl: sandbox.interBaseUrl,
      timeoutMs: 5_000,
      webhookUrl: (accountId) => `http://127.0.0.1:${webhooks.port}/provider/webhooks/inter/${accountId}`,
      trustedCaPem: sandbox.ca.certPem,
      issuePollMs: [0, 100, 300, 1_000],
      pix: new PixProvider({
        dialect: PIX_DIALECTS.inter,
        credentials,
        defaultBaseUrl: sandbox.interBaseUrl,
        tokenKey: (bankAccount) => `${bankAccount}:pix`,
        timeoutMs: 5_000,
        webhookUrl: (accountId) => `http://127.0.0.1:${webhooks.port}/provider/webhooks/pix/${accountId}`,
        trustedCaPem: sandbox.ca.certPem,
      }),
    });
    interProviders = { sandbox: unused, inter, pix: unused };
  });
  afterAll(async () => {
    await inter?.close();
  });

  /** A new tenant's `inter` account on its own sandbox integration (with a PIX key), and a boleto and a cobv registered there. */
  async function boletoAndCobv(): Promise<{ tenantId: string; boleto: ReceivableRow; cobv: ReceivableRow }> {
    const answer = await sandbox.control('POST', '/sandbox/inter/integrations');
    expect(answer.status).toBe(201);
    const {
      account: checking,
      pix_key: pixKey,
      ...credentials
    } = answer.body as InterCredentials & { account: string; pix_key: string };
    const tenantId = randomUUID();
    const version = accountVersion(tenantId, 'inter', { pix_key: pixKey, account: checking });
    interCredentials.set(version.account_id, credentials);
    const clientId = f.clients.add(tenantId);
    const items = [chargeItem(clientId, { payment_method: 1 }), chargeItem(clientId, { payment_method: 3 })];
    await acceptReceivables(f.db, f.clients, tenantId, version, items);
    const accepted = await Promise.all(items.map((i) => row(f, tenantId, i.account_receivable_id)));
    const deps = {
      db: f.db,
      providers: interProviders,
      accounts: f.accounts,
      slipLinks: f.slipLinks,
      logger: f.logger,
    };
    const job = { tenant_id: tenantId, receivable_ids: accepted.map((r) => r.id) };
    for (let attempt = 1; attempt <= 5; attempt += 1)
      if ((await registerReceivables(deps, job, attempt)) === 'done') break;
    const [boleto, cobv] = await Promise.all(accepted.map((r) => rowById(f, r.id)));
    if (!boleto || !cobv) throw new Error('the charges were not registered');
    expect(boleto).toMatchObject({ registration_status: 'registered', state: 'pending' });
    expect(cobv).toMatchObject({ registration_status: 'registered', provider_charge_id: txidFor(cobv.id) });
    return { tenantId, boleto, cobv };
  }

  it("confirms a cobv's PIX notice through the account's consult, routed to its PIX API by the txid", async () => {
    const { cobv } = await boletoAndCobv();
    const txid = txidFor(cobv.id);
    expect((await sandbox.control('POST', `/sandbox/charges/${txid}/pay`, { method: 'pix' })).status).toBe(200);
    await noticesArrive(txid, 1);
    const consult = jest.spyOn(inter, 'consult');
    await applyDueNotices({
      db: f.db,
      providers: interProviders,
      accounts: f.accounts,
      timeZone: TZ,
      logger: f.logger,
    });
    expect(consult.mock.calls.map(([, chargeId]) => chargeId)).toEqual([txid]);
    const after = await rowById(f, cobv.id);
    expect(after).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect(Number(after.amount_paid_cents)).toBe(Number(cobv.amount_cents));
    expect((await noticesOf(txid))[0]).toMatchObject({ source: 'webhook', outcome: 'approved' });
  });

  it('is applied once, to the boleto, by the boleto path: never to a cobv, never kept as an unknown charge', async () => {
    const { tenantId, boleto, cobv } = await boletoAndCobv();

    // Notices lost: only reconciliation finds the payment. The boleto is paid through its PIX QR code.
    await sandbox.control('POST', '/sandbox/inter/faults', { drop_webhooks: true });
    const paid = await sandbox.control('POST', `/sandbox/charges/${boleto.provider_charge_id}/pay`, { method: 'pix' });
    expect(paid.status).toBe(200);
    const sweep = jest.spyOn(inter, 'sweep');
    await reconcileAllNow(f, interProviders);
    await applyDueNotices(
      { db: f.db, providers: interProviders, accounts: f.accounts, timeZone: TZ, logger: f.logger },
      500,
    );

    // The account's sweep read its PIX list (complete), and the boleto's PIX was in it under the boleto's txid.
    const results = await Promise.all(sweep.mock.results.map((r) => r.value as Promise<{ complete: boolean }>));
    expect(results.at(-1)?.complete).toBe(true);
    const boletoAfter = await rowById(f, boleto.id);
    expect(boletoAfter).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect((await rowById(f, cobv.id)).state).toBe('pending');
    expect((await paidCallbacks(boletoAfter)).length).toBe(1);
    const stored = await f.db
      .selectFrom('bank_notice_log')
      .select(['charge_id', 'outcome'])
      .where('tenant_id', '=', tenantId)
      .execute();
    // Besides the boleto's own notices (its issue, ignored), its payment once; nothing about any txid.
    expect(stored.filter((n) => n.outcome !== 'ignored')).toEqual([
      { charge_id: boleto.provider_charge_id, outcome: 'approved' },
    ]);
    expect(stored.every((n) => n.charge_id === boleto.provider_charge_id)).toBe(true);
  });
});
