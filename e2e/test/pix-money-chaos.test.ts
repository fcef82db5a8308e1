import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaidCallback, RegisteredCallback } from '@payments/contracts';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import { InterBankControls, setInterAccount } from '../support/inter-bank';
import { centsOf, PixBankControls, type Cobv, pixSandboxTls, setPixAccount, TXID_PATTERN } from '../support/pix-bank';
import { AppProcess } from '../support/process';
import type { ReceivableCallback } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * Nothing is lost at a bank's PIX API: a payment whose notice the bank never sends reaches the ERP
 * through reconciliation (GET /pix), and receivables-svc killed with -9 while it creates cobvs leaves
 * exactly one cobv per charge at the bank and one registered callback each. receivables-svc runs as
 * its own process so that it can be killed. The oracle is the bank's own list of cobvs and the
 * callbacks the ERP's receiver got.
 */

const RECONCILE_INTERVAL_MS = 3_000;
const CHARGES = 40;

let system: TestSystem;
let receiver: CallbackReceiver;
let bank: PixBankControls;
let dir: string;
/** The two kinds of account a PIX charge is a cobv at: a `pix` one and an `inter` one with a PIX key. */
interface ChaosAccount {
  kind: 'pix' | 'inter';
  tenant: TestTenant;
  /** The integration's client id at the bank. */
  clientId: string;
  payerId: string;
}
let pixAccount: ChaosAccount;
let interAccount: ChaosAccount;
let receivables: AppProcess | undefined;
const runs: AppProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pix-chaos-'));
  const tls = await pixSandboxTls(dir);
  system = await startSystem({
    withSandboxOnly: true,
    withCallbacks: true,
    env: {
      ...tls.env,
      PROVIDER_RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS),
      BANK_SANDBOX_INTER_NOTICE_RETRY_MS: '500,1000,2000,4000',
      PROVIDER_TIMEOUT_MS: '3000',
      CALLBACK_POLL_INTERVAL_MS: '100',
    },
  });
  receiver = await new CallbackReceiver().start();
  if (!system.sandboxUrl) throw new Error('the system started without its bank sandbox');
  bank = new PixBankControls(system.sandboxUrl);
  await startReceivables();
  const pixTenant = await system.newTenant('Escola Pix Caos');
  const pix = await bank.newIntegration();
  await setPixAccount(system.databaseUrl, dir, pixTenant.tenantId, pix, {
    name: 'Escola Caos Controlado',
    taxId: '45.723.174/0001-10',
  });
  pixAccount = { kind: 'pix', tenant: pixTenant, clientId: pix.client_id, payerId: await newPayer(pixTenant) };
  const interTenant = await system.newTenant('Loja Inter Pix Caos');
  const inter = await new InterBankControls(system.sandboxUrl).newIntegration();
  await setInterAccount(system.databaseUrl, dir, interTenant.tenantId, inter, tls.interBaseUrl);
  interAccount = {
    kind: 'inter',
    tenant: interTenant,
    clientId: inter.client_id,
    payerId: await newPayer(interTenant),
  };
}, 120_000);

async function newPayer(tenant: TestTenant): Promise<string> {
  const payer = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);
  return payer.client_id;
}

afterAll(async () => {
  await receivables?.kill();
  await bank?.setFaults({ drop_webhooks: false, consult_not_found_ms: 0 }).catch(() => undefined);
  await receiver?.stop();
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function startReceivables(): Promise<void> {
  const proc = new AppProcess('receivables-svc', { ...system.env, LOG_LEVEL: 'info' });
  runs.push(proc);
  await proc.start('receivables-svc ready', 60_000);
  receivables = proc;
}

async function killReceivables(): Promise<void> {
  await receivables?.kill();
  receivables = undefined;
}

function pixCharge(account: ChaosAccount, value: number) {
  return receivablePayload(account.payerId, receiver.url, {
    payment_method: 3,
    items: [],
    value,
    emission_date: brasiliaDate(),
    due_date: brasiliaDate(15),
  });
}

/** The distinct callback events (by webhook-id) of a charge, parsed. */
function eventsOf(id: string): ReceivableCallback[] {
  const seen = new Map<string, ReceivableCallback>();
  for (const r of receiver.received) {
    const body = JSON.parse(r.body) as ReceivableCallback;
    if (body.accounts_receivable_id === id && !seen.has(r.headers['webhook-id']))
      seen.set(r.headers['webhook-id'], body);
  }
  return [...seen.values()];
}
const registeredEvents = (id: string) =>
  eventsOf(id).filter((c): c is RegisteredCallback => 'type' in c && c.type === 'registered');
const paidEvents = (id: string) => eventsOf(id).filter((c): c is PaidCallback => 'type' in c && c.type === 'paid');

/** The last lines of every receivables-svc run. */
function tail(): string {
  return runs.map((p, i) => `--- run ${i + 1}\n${p.output.split('\n').slice(-15).join('\n')}`).join('\n');
}

it('a payment whose notice the bank drops reaches the ERP through reconciliation, once', async () => {
  await bank.setFaults({ drop_webhooks: true });
  const item = pixCharge(pixAccount, 64.32);
  const id = item.account_receivable_id;
  expect((await pixAccount.tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  await waitFor(() => registeredEvents(id).length > 0, 30_000, 'the registered callback');
  const [registered] = registeredEvents(id);
  expect(registered).toMatchObject({
    success: true,
    payment_data: { our_number: expect.stringMatching(TXID_PATTERN) },
  });

  expect((await bank.pay(registered.payment_data.our_number)).status).toBe(200);
  await waitFor(() => paidEvents(id).length > 0, 4 * RECONCILE_INTERVAL_MS + 10_000, 'the paid callback').catch(
    (err: Error) => {
      throw new Error(`${err.message}; receivables-svc said:\n${tail()}`);
    },
  );
  expect(paidEvents(id)[0]).toMatchObject({ amount_paid: 64.32, payment_type: 'Pix' });
  // Another sweep or two finds the same payment: still one paid callback.
  await new Promise((r) => setTimeout(r, 2 * RECONCILE_INTERVAL_MS));
  expect(paidEvents(id)).toHaveLength(1);
  await bank.setFaults({ drop_webhooks: false });
}, 90_000);

it("a devolução whose notice the bank drops reaches the charge's history through reconciliation", async () => {
  await bank.setFaults({ drop_webhooks: true });
  // Two charges: the one refunded, and one left open so that the account has open charges to sweep.
  const [refunded, open] = [pixCharge(pixAccount, 58.21), pixCharge(pixAccount, 58.22)];
  expect((await pixAccount.tenant.api.postIdempotent('/api/v1/accounts-receivable', [refunded, open])).status).toBe(
    202,
  );
  const id = refunded.account_receivable_id;
  await waitFor(() => registeredEvents(id).length > 0, 30_000, 'the registered callback');
  const txid = registeredEvents(id)[0].payment_data.our_number;
  expect((await bank.pay(txid)).status).toBe(200);
  await waitFor(() => paidEvents(id).length > 0, 4 * RECONCILE_INTERVAL_MS + 10_000, 'the paid callback');
  const refund = await bank.refund(txid, 8.21);

  const historyPath = `/api/v1/accounts-receivable/${id}/history`;
  type History = { items: Array<{ from_state: string | null; to_state: string; reason: string }> };
  let history: History = { items: [] };
  const refundsInHistory = () => history.items.filter((h) => /devolu|refund/i.test(h.reason));
  await waitFor(
    async () => {
      history = (await pixAccount.tenant.api.send<History>('GET', historyPath)).json;
      return refundsInHistory().length > 0;
    },
    4 * RECONCILE_INTERVAL_MS + 10_000,
    "the devolução in the charge's history",
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the history: ${JSON.stringify(history.items)}; receivables-svc said:\n${tail()}`);
  });
  expect(refundsInHistory()[0].reason).toContain(refund.id);
  // Later sweeps find the same devolução: written once.
  await new Promise((r) => setTimeout(r, 2 * RECONCILE_INTERVAL_MS));
  history = (await pixAccount.tenant.api.send<History>('GET', historyPath)).json;
  expect(refundsInHistory()).toHaveLength(1);
  await bank.setFaults({ drop_webhooks: false });
}, 90_000);

it('receivables-svc killed -9 while it creates cobvs: one cobv per charge at the bank, one registered callback each', async () => {
  // Half the charges at each account, each charge its own value, to tell them apart without our txid rule.
  const batches = [pixAccount, interAccount].map((account, a) => ({
    account,
    items: Array.from({ length: CHARGES / 2 }, (_, i) =>
      pixCharge(account, (370_000 + ((a * CHARGES) / 2 + i) * 37) / 100),
    ),
  }));
  // The bank answers a consult 404 for 2 s after a create (not issued yet, to its API): a restarted
  // service that looks its charges up first must not take that for "never created".
  await bank.setFaults({ consult_not_found_ms: 2_000 });
  for (const { account, items } of batches)
    expect((await account.tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  const ids = batches.flatMap((b) => b.items.map((item) => item.account_receivable_id));
  const outcomes = () => ids.filter((id) => registeredEvents(id).length > 0).length;

  // Twice: killed as soon as the first (or next) registrations are told, then started again.
  let kills = 0;
  for (const threshold of [1, Math.ceil(CHARGES / 3)]) {
    await waitFor(() => outcomes() >= threshold, 60_000, `${threshold} registered callbacks`);
    if (outcomes() >= CHARGES) break;
    await killReceivables();
    kills += 1;
    await startReceivables();
  }
  await waitFor(() => outcomes() === CHARGES, 90_000, `a registered callback for each of the ${CHARGES}`).catch(
    (err: Error) => {
      throw new Error(`${err.message}: ${CHARGES - outcomes()} without one; receivables-svc said:\n${tail()}`);
    },
  );
  // Room for a late duplicate.
  await new Promise((r) => setTimeout(r, 2_000));

  await bank.setFaults({ consult_not_found_ms: 0 });
  const problems: string[] = [];
  for (const { account, items } of batches) problems.push(...(await oneCobvEach(account, items)));
  expect(await bank.boletos(interAccount.clientId)).toEqual([]);
  console.log(`pix money chaos: ${kills} kill -9 of receivables-svc while ${CHARGES} cobvs were created`);
  expect(problems).toEqual([]);
  expect(kills).toBeGreaterThanOrEqual(1);
}, 180_000);

/**
 * What the bank holds for an account's charges: exactly one cobv of each charge's value (each has its
 * own), under the txid and with the BR Code the ERP was told, one registered callback each, and no
 * cobv that is none of these charges' (but those of the other tests).
 */
async function oneCobvEach(account: ChaosAccount, items: Array<ReturnType<typeof pixCharge>>): Promise<string[]> {
  const byValue = new Map<number, Cobv[]>();
  for (const cobv of await bank.charges(account.clientId)) {
    const cents = centsOf(cobv.valor.original);
    byValue.set(cents, [...(byValue.get(cents) ?? []), cobv]);
  }
  const problems: string[] = [];
  for (const item of items) {
    const id = `${account.kind} ${item.account_receivable_id}`;
    const registered = registeredEvents(item.account_receivable_id);
    if (registered.length !== 1) problems.push(`${id}: ${registered.length} registered callbacks`);
    if (registered.some((r) => !r.success)) problems.push(`${id}: rejected (${JSON.stringify(registered)})`);
    const atBank = byValue.get(centsOf(item.value)) ?? [];
    if (atBank.length !== 1) problems.push(`${id}: ${atBank.length} cobv at the bank`);
    const told = registered[0]?.success ? registered[0].payment_data : undefined;
    if (told && atBank.length === 1 && told.our_number !== atBank[0].txid)
      problems.push(`${id}: the ERP was told txid ${told.our_number}, the bank's cobv is ${atBank[0].txid}`);
    if (told && atBank.length === 1 && told.pix_copy_and_paste !== atBank[0].pixCopiaECola)
      problems.push(`${id}: the ERP's BR Code is not the bank's`);
  }
  const known = new Set([...items.map((item) => centsOf(item.value)), 6_432, 5_821, 5_822]);
  for (const [cents, cobvs] of byValue)
    if (!known.has(cents))
      problems.push(`${account.kind}: ${cobvs.length} cobv(s) of ${cents / 100} belong to no charge`);
  return problems;
}
