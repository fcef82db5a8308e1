import { randomUUID } from 'node:crypto';
import type { InterCredentials, ProviderAccountVersion, RegistrationJob } from '@payments/contracts';
import { createMetricsRegistry, MetricNames } from '@payments/metrics';
import type { ReceivableRow } from '../src/db/schema';
import { registerReceivables } from '../src/domain/registration';
import { InterProvider } from '../src/transport/providers/inter';
import { paymentMetrics } from '../src/transport/metrics';
import { startNoticeWorker, type NoticeWorker } from '../src/transport/notice-worker';
import { startReconciler } from '../src/transport/reconciler';
import { startInterSandbox, type InterSandbox } from './inter-sandbox';
import {
  accountVersion,
  callbacksFor,
  chargeItem,
  history,
  row,
  rowById,
  serveProviderWebhooks,
  startStateFixture,
  TestProvider,
  TZ,
  type StateFixture,
} from './state-fixture';
import { acceptReceivables } from '../src/domain/intake';

// Inter's notices and reconciliation end to end inside receivables-svc: the bank sandbox's Inter
// dialect in its own process (mutual TLS), our webhook HTTP server receiving its notices, the notice
// worker and the reconciler running as the service runs them, and a real Postgres. The sandbox is the
// oracle: it pays, cancels and lets expire as Inter would, and drops its notices when told to.

const RECONCILE_INTERVAL_MS = 1_000;

let sandbox: InterSandbox;
let f: StateFixture;
let inter: InterProvider;
let notices: NoticeWorker;
let reconciler: { stop(): Promise<void> };
let startTestReconciler: () => { stop(): Promise<void> };
let webhooks: { port: number; stop(): Promise<void> };
const metrics = createMetricsRegistry('receivables-test');
const payments = paymentMetrics(metrics);
const credentials = new Map<string, InterCredentials>();

beforeAll(async () => {
  [sandbox, f] = await Promise.all([startInterSandbox(), startStateFixture()]);
  webhooks = await serveProviderWebhooks(f, { metrics, paymentMetrics: payments, onNotice: () => notices?.wake() });
  inter = new InterProvider({
    credentials: (account) => {
      const found = credentials.get(account.id);
      if (!found) return Promise.reject(new Error(`provider account ${account.id} has no credentials`));
      return Promise.resolve({ versionId: account.id, credentials: found });
    },
    defaultBaseUrl: sandbox.interBaseUrl,
    timeoutMs: 5_000,
    webhookUrl: (accountId) => `http://127.0.0.1:${webhooks.port}/provider/webhooks/inter/${accountId}`,
    trustedCaPem: sandbox.ca.certPem,
    issuePollMs: [0, 100, 300, 1_000],
  });
  const providers = { sandbox: new TestProvider(), inter, pix: new TestProvider() };
  notices = startNoticeWorker(
    { db: f.db, providers, accounts: f.accounts, timeZone: TZ, logger: f.logger, observer: payments },
    100,
  );
  startTestReconciler = () =>
    startReconciler({
      db: f.db,
      providers,
      accounts: f.accounts,
      logger: f.logger,
      intervalMs: RECONCILE_INTERVAL_MS,
      onNotice: () => notices.wake(),
    });
  reconciler = startTestReconciler();
}, 60_000);

afterAll(async () => {
  await reconciler?.stop();
  await notices?.stop();
  await webhooks?.stop();
  await inter?.close();
  await Promise.all([sandbox?.stop(), f?.stop()]);
});

afterEach(async () => {
  await sandbox.control('POST', '/sandbox/inter/faults', { drop_webhooks: false });
});

/** A tenant with an Inter account (its own integration at the sandbox) and `count` charges registered there. */
async function registeredAtInter(count: number, value = 150.75): Promise<{ rows: ReceivableRow[]; clientId: string }> {
  const tenantId = randomUUID();
  // No checking account named: the integration's only one (no x-conta-corrente header).
  const account: ProviderAccountVersion = accountVersion(tenantId, 'inter', { account: null });
  const clientId = `client-${account.account_id.slice(0, 8)}`;
  const cert = sandbox.ca.issue({ commonName: clientId, kind: 'client' });
  credentials.set(account.account_id, {
    client_id: clientId,
    client_secret: `secret-${account.account_id}`,
    cert_pem: cert.certPem,
    key_pem: cert.keyPem,
  });
  const client = f.clients.add(tenantId);
  const items = Array.from({ length: count }, () => chargeItem(client, { value }));
  await acceptReceivables(f.db, f.clients, tenantId, account, items);
  const accepted = await Promise.all(items.map((i) => row(f, tenantId, i.account_receivable_id)));
  const job: RegistrationJob = { tenant_id: tenantId, receivable_ids: accepted.map((r) => r.id) };
  const deps = {
    db: f.db,
    providers: { sandbox: new TestProvider(), inter, pix: new TestProvider() },
    accounts: f.accounts,
    slipLinks: f.slipLinks,
    logger: f.logger,
  };
  for (let attempt = 1; attempt <= 5; attempt += 1)
    if ((await registerReceivables(deps, job, attempt)) === 'done') break;
  const rows = await Promise.all(accepted.map((r) => rowById(f, r.id)));
  for (const r of rows) expect(r).toMatchObject({ state: 'pending', registration_status: 'registered' });
  return { rows, clientId };
}

async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function until(id: string, state: ReceivableRow['state']): Promise<ReceivableRow> {
  return eventually(async () => {
    const r = await rowById(f, id);
    if (r.state !== state) throw new Error(`receivable ${id} is ${r.state}, not ${state}`);
    return r;
  });
}

async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.getSingleMetric(name);
  const values = (await metric!.get()).values.filter((v) =>
    Object.entries(labels).every(([k, value]) => v.labels[k] === value),
  );
  return values.reduce((sum, v) => sum + v.value, 0);
}

/** Today in Brasília (UTC-3): the day the bank books a payment made now on. */
function brasiliaToday(): string {
  return new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
}

async function pay(chargeId: string, body: Record<string, unknown>) {
  const paid = await sandbox.control('POST', `/sandbox/charges/${chargeId}/pay`, body);
  expect(paid.status).toBe(200);
}

describe('Inter: notices stored and applied, reconciliation finds what they missed', () => {
  it('finds a payment whose notice was dropped: paid at 00:00 Brasília of the listed day, the time unknown, applied once even when the notice arrives too', async () => {
    const { rows } = await registeredAtInter(1);
    const [r] = rows;
    const found = await counter(MetricNames.reconciliationFound, { kind: 'paid' });
    await sandbox.control('POST', '/sandbox/inter/faults', { drop_webhooks: true });
    await pay(r.provider_charge_id!, { method: 'boleto' });

    // Within two intervals, with no notice at all.
    const paid = await eventually(() => until(r.id, 'approved'), 2 * RECONCILE_INTERVAL_MS + 5_000);
    expect(paid).toMatchObject({ amount_paid_cents: 15_075, payment_type: 'boleto' });
    expect(paid.payment_date?.toISOString()).toBe(new Date(`${brasiliaToday()}T00:00:00-03:00`).toISOString());
    expect((await history(f, r.id)).at(-1)?.reason).toBe(
      'paid by boleto; the bank reported the payment date only: the time of payment is unknown',
    );
    expect(await counter(MetricNames.reconciliationFound, { kind: 'paid' })).toBe(found + 1);

    // The notice arrives after all (Inter's late retry): stored, applied, nothing more.
    const late = await fetch(`http://127.0.0.1:${webhooks.port}/provider/webhooks/inter/${r.provider_account_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          codigoSolicitacao: r.provider_charge_id,
          situacao: 'RECEBIDO',
          dataHoraSituacao: new Date().toISOString(),
          valorTotalRecebido: '150.75',
          origemRecebimento: 'BOLETO',
        },
      ]),
    });
    expect(late.status).toBe(200);
    await eventually(async () => {
      const stored = await f.db
        .selectFrom('bank_notice_log')
        .select(['source', 'outcome'])
        .where('charge_id', '=', r.provider_charge_id!)
        .where('source', '=', 'webhook')
        .where('kind', '=', 'paid')
        .execute();
      expect(stored).toEqual([{ source: 'webhook', outcome: 'already_paid' }]);
    });
    await new Promise((resolve) => setTimeout(resolve, 2 * RECONCILE_INTERVAL_MS));
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
  });

  it("applies the notice with the bank's time and amount, below or above the amount due; reconciliation adds nothing", async () => {
    const { rows } = await registeredAtInter(2);
    const [under, over] = rows;
    // No sweep while the notices come: with a 1 s interval a list could find the payments first.
    await reconciler.stop();
    const found = await counter(MetricNames.reconciliationFound);
    const below = await counter(MetricNames.paymentsOffAmount, { direction: 'below' });
    const above = await counter(MetricNames.paymentsOffAmount, { direction: 'above' });
    const before = Date.now();
    await pay(under.provider_charge_id!, { method: 'pix', amount: 100.5 });
    await pay(over.provider_charge_id!, { method: 'boleto', amount: 200 });

    const paidUnder = await until(under.id, 'approved');
    const paidOver = await until(over.id, 'approved');
    expect(paidUnder).toMatchObject({ amount_paid_cents: 10_050, payment_type: 'pix' });
    expect(paidOver).toMatchObject({ amount_paid_cents: 20_000, payment_type: 'boleto' });
    // The notice's dataHoraSituacao: the instant, not a day.
    expect(paidUnder.payment_date!.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect((await history(f, under.id)).at(-1)?.reason).toBe(
      'paid by pix; 100.50 received, below the amount due of 150.75',
    );
    expect((await history(f, over.id)).at(-1)?.reason).toBe(
      'paid by boleto; 200.00 received, above the amount due of 150.75',
    );
    expect(await counter(MetricNames.paymentsOffAmount, { direction: 'below' })).toBe(below + 1);
    expect(await counter(MetricNames.paymentsOffAmount, { direction: 'above' })).toBe(above + 1);

    // Sweeps that list these payments again change nothing and count nothing.
    reconciler = startTestReconciler();
    await new Promise((resolve) => setTimeout(resolve, 3 * RECONCILE_INTERVAL_MS));
    expect(await counter(MetricNames.reconciliationFound)).toBe(found);
    for (const r of rows)
      expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
  });

  it.each([
    ['cancel', 'CANCELADO'],
    ['expire', 'EXPIRADO'],
  ])(
    'a charge the bank %ss (%s) becomes cancelled, with one receivable.cancelled callback',
    async (control, situation) => {
      const { rows } = await registeredAtInter(1);
      const [r] = rows;
      expect((await sandbox.control('POST', `/sandbox/inter/charges/${r.provider_charge_id}/${control}`)).status).toBe(
        200,
      );
      await until(r.id, 'cancelled');
      expect((await history(f, r.id)).at(-1)).toEqual({
        from_state: 'pending',
        to_state: 'cancelled',
        reason: `cancelled at the bank (inter: ${situation})`,
      });
      await new Promise((resolve) => setTimeout(resolve, 2 * RECONCILE_INTERVAL_MS));
      const cancelled = (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.cancelled');
      expect(cancelled.map((c) => c.payload)).toEqual([
        {
          status: 'success',
          accounts_receivable_id: r.account_receivable_id,
          message: `the charge was cancelled at the bank (inter: ${situation})`,
        },
      ]);
    },
  );

  it('finds a cancellation whose notice was dropped', async () => {
    const { rows } = await registeredAtInter(1);
    const [r] = rows;
    await sandbox.control('POST', '/sandbox/inter/faults', { drop_webhooks: true });
    expect((await sandbox.control('POST', `/sandbox/inter/charges/${r.provider_charge_id}/cancel`)).status).toBe(200);
    await eventually(() => until(r.id, 'cancelled'), 2 * RECONCILE_INTERVAL_MS + 5_000);
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.cancelled')).toHaveLength(1);
  });

  it('sweeps an account with a few calls a sweep, whatever its open charges: lists by date, never a consult per charge', async () => {
    const { clientId } = await registeredAtInter(30);
    const calls = async () =>
      (await sandbox.control('GET', `/sandbox/inter/calls?client_id=${clientId}`)).body as {
        endpoints: Record<string, { total: number }>;
      };
    const start = await calls();
    const sweeps = await f.db.selectFrom('reconciliation_accounts').select('last_complete_at').execute();
    expect(sweeps.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 4 * RECONCILE_INTERVAL_MS));
    const end = await calls();
    const grew = (endpoint: string) => (end.endpoints[endpoint]?.total ?? 0) - (start.endpoints[endpoint]?.total ?? 0);
    // Each sweep: the callback history once and three lists (paid, cancelled, expired), one page each.
    expect(grew('consult')).toBe(0);
    expect(grew('list')).toBeGreaterThan(0);
    expect(grew('list')).toBeLessThanOrEqual(3 * 6);
    expect(grew('callbacks')).toBeLessThanOrEqual(6);
  });
});
