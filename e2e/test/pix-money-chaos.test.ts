import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaidCallback, RegisteredCallback } from '@payments/contracts';
import { clientPayload, receivablePayload } from '../support/fixtures';
import {
  centsOf,
  PixBankControls,
  type Cobv,
  pixSandboxTls,
  setPixAccount,
  TXID_PATTERN,
  type PixIntegration,
} from '../support/pix-bank';
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
let tenant: TestTenant;
let integration: PixIntegration;
let payerId: string;
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
  tenant = await system.newTenant('Escola Pix Caos');
  integration = await bank.newIntegration();
  await setPixAccount(system.databaseUrl, dir, tenant.tenantId, integration, {
    name: 'Escola Caos Controlado',
    taxId: '45.723.174/0001-10',
  });
  const payer = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);
  payerId = payer.client_id;
}, 120_000);

afterAll(async () => {
  await receivables?.kill();
  await bank?.setFaults({ drop_webhooks: false }).catch(() => undefined);
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

/** A date `days` from today in Brasília, YYYY-MM-DD. */
function brasiliaDate(days = 0): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(
    new Date(Date.now() + days * 86_400_000),
  );
}

function pixCharge(value: number) {
  return receivablePayload(payerId, receiver.url, {
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
  const item = pixCharge(64.32);
  const id = item.account_receivable_id;
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
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

it('receivables-svc killed -9 while it creates cobvs: one cobv per charge at the bank, one registered callback each', async () => {
  // Each charge its own value, to tell them apart without our txid rule too.
  const items = Array.from({ length: CHARGES }, (_, i) => pixCharge((10_000 + i * 37) / 100));
  const ids = items.map((item) => item.account_receivable_id);
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
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

  // The bank's cobvs by value: every charge has its own, so a cobv is matched to its charge without
  // our txid rule.
  const byValue = new Map<number, Cobv[]>();
  for (const cobv of await bank.charges(integration.client_id)) {
    const cents = centsOf(cobv.valor.original);
    byValue.set(cents, [...(byValue.get(cents) ?? []), cobv]);
  }
  const problems: string[] = [];
  for (const [i, id] of ids.entries()) {
    const registered = registeredEvents(id);
    if (registered.length !== 1) problems.push(`${id}: ${registered.length} registered callbacks`);
    if (registered.some((r) => !r.success)) problems.push(`${id}: rejected (${JSON.stringify(registered)})`);
    const atBank = byValue.get(centsOf(items[i].value)) ?? [];
    if (atBank.length !== 1) problems.push(`${id}: ${atBank.length} cobv at the bank`);
    const told = registered[0]?.success ? registered[0].payment_data : undefined;
    if (told && atBank.length === 1 && told.our_number !== atBank[0].txid)
      problems.push(`${id}: the ERP was told txid ${told.our_number}, the bank's cobv is ${atBank[0].txid}`);
    if (told && atBank.length === 1 && told.pix_copy_and_paste !== atBank[0].pixCopiaECola)
      problems.push(`${id}: the ERP's BR Code is not the bank's`);
  }
  // Nothing at the bank that is not one of these charges (or the one paid above).
  const known = new Set([...items.map((item) => centsOf(item.value)), 6_432]);
  for (const [cents, cobvs] of byValue)
    if (!known.has(cents)) problems.push(`${cobvs.length} cobv(s) of ${cents / 100} belong to no charge`);
  console.log(`pix money chaos: ${kills} kill -9 of receivables-svc while ${CHARGES} cobvs were created`);
  expect(problems).toEqual([]);
  expect(kills).toBeGreaterThanOrEqual(1);
}, 180_000);
