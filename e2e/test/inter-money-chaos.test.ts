import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaidCallback, RegisteredCallback } from '@payments/contracts';
import { createTestCertificateAuthority, writeSandboxInterTls } from '@payments/inter-cobranca/test-certificates';
import { sweepLeaseMs } from '@payments/receivables-svc';
import { failChargeIdWrites, type InjectedFault } from '../support/db-faults';
import { brasiliaDate, clientPayload, receivablePayload } from '../support/fixtures';
import {
  cents,
  InterBankControls,
  InterNeighbour,
  LIVE_SITUATIONS,
  setInterAccount,
  type BankCharge,
  type InterIntegration,
} from '../support/inter-bank';
import { AppProcess } from '../support/process';
import type { ReceivableCallback } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { freePort, startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * the money chaos test ("A real bank loses nothing" in docs/architecture.md). An Inter tenant, its
 * integration made by the sandbox as Inter's internet banking would, registers 60 charges while the
 * bank answers 404 to consults just after a create, 429 beyond 120 calls a minute, and drops every
 * notice; meanwhile receivables-svc (its own process) is killed with -9 at random moments and
 * restarted, the database fails right after some successful creates, and the bank fails to issue a
 * few charges. Then 20 are paid at the bank, some under and some over the amount due.
 *
 * The oracle is the bank's own view (GET /sandbox/inter/charges) and the callbacks the ERP's receiver
 * got, never our database's word. Each charge has a distinct value, so a boleto is matched to its
 * charge by its valorNominal without using the adapter's seuNumero derivation.
 */

const CHARGES = 60;
const PAYMENTS = 20;
/** Charges the bank fails to issue (FALHA_EMISSAO): these are rejected, with nothing live at the bank. */
const ISSUE_FAILURES = 2;
/** Writes of a bank's charge id that fail right after the create. */
const DB_FAULTS = 3;
const KILLS_WHILE_REGISTERING = 3;
const RECONCILE_INTERVAL_MS = 6_000;
/**
 * How long the payments may take to be called back. The first half are found by a sweep only, and
 * the kill -9 between the halves may land mid-sweep: the dead instance's lease then keeps the
 * account from the restarted one for up to its length. A minute more for the sweep, the notices and
 * the callbacks, as before any kill.
 */
const PAID_PATIENCE_MS = sweepLeaseMs(RECONCILE_INTERVAL_MS) + 60_000;
/** How long another client of the account keeps its list budget spent, at most, waiting for one of our calls to meet a 429. */
const NEIGHBOUR_MAX_MS = 180_000;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);

let system: TestSystem;
let receiver: CallbackReceiver;
let bank: InterBankControls;
let dir: string;
let interBaseUrl: string;
let caPem: string;
let fault: InjectedFault | undefined;
/** The receivables-svc process running now, and every one started (their output, for a failure's story). */
let receivables: AppProcess | undefined;
const runs: AppProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inter-chaos-'));
  const interPort = await freePort();
  interBaseUrl = `https://127.0.0.1:${interPort}/inter`;
  // The dialect's CA, with its key so that POST /sandbox/inter/integrations can sign integrations.
  const ca = createTestCertificateAuthority('Inter money chaos CA');
  caPem = ca.certPem;
  const tls = writeSandboxInterTls(ca, dir);
  const caKeyFile = join(dir, 'inter-ca.key');
  writeFileSync(caKeyFile, ca.keyPem, { mode: 0o600 });
  system = await startSystem({
    withSandboxOnly: true,
    withCallbacks: true,
    env: {
      BANK_SANDBOX_INTER_PORT: String(interPort),
      ...tls,
      BANK_SANDBOX_INTER_TLS_CA_KEY_FILE: caKeyFile,
      // Inter's own limits too (5 token and webhook calls a minute, 10 callback history), besides the fault.
      BANK_SANDBOX_INTER_ENFORCE_LIMITS: 'true',
      INTER_BASE_URL: interBaseUrl,
      INTER_TRUSTED_CA_FILE: tls.BANK_SANDBOX_INTER_TLS_CA_FILE,
      // Inter retries a refused notice after 20, 30, 60 and 120 minutes; here within seconds.
      BANK_SANDBOX_INTER_NOTICE_RETRY_MS: '500,1000,2000,4000',
      PROVIDER_RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS),
      PROVIDER_TIMEOUT_MS: '3000',
      CALLBACK_POLL_INTERVAL_MS: '100',
    },
  });
  receiver = await new CallbackReceiver().start();
  if (!system.sandboxUrl) throw new Error('the system started without its bank sandbox');
  bank = new InterBankControls(system.sandboxUrl);
}, 120_000);

afterAll(async () => {
  chaosOver = true;
  await killing?.catch(() => undefined);
  await receivables?.kill();
  // CHAOS_LOG_DIR=<dir> keeps what each receivables-svc run logged, to read a run's story after it.
  const logDir = process.env.CHAOS_LOG_DIR;
  if (logDir) runs.forEach((p, i) => writeFileSync(join(logDir, `receivables-svc-${i + 1}.log`), p.output));
  await fault?.remove().catch(() => undefined);
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

/** mulberry32: the chaos is random, and a failing run is repeated with its seed (CHAOS_SEED). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The distinct callback events (by webhook-id) a charge got, parsed. */
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
  eventsOf(id).filter((c): c is RegisteredCallback => 'type' in c && c.type === 'registered' && c.success);
const rejectedEvents = (id: string) => eventsOf(id).filter((c) => 'type' in c && c.type === 'registered' && !c.success);
const paidEvents = (id: string) => eventsOf(id).filter((c): c is PaidCallback => 'type' in c && c.type === 'paid');

/** The bank's boletos by value in cents (every charge of the test has its own value). */
async function bankByValue(integration: InterIntegration): Promise<Map<number, BankCharge[]>> {
  const byValue = new Map<number, BankCharge[]>();
  for (const charge of await bank.charges(integration.client_id)) {
    const key = cents(charge.cobranca.valorNominal);
    byValue.set(key, [...(byValue.get(key) ?? []), charge]);
  }
  return byValue;
}

/** Kills receivables-svc at random moments (and starts it again) until `done` or `times` kills. */
/** Set by afterAll: a failed run's kill loop stops, so it restarts nothing after the system is gone. */
let chaosOver = false;
let killing: Promise<number> | undefined;

async function killAtRandom(rnd: () => number, times: number, done: () => boolean): Promise<number> {
  let kills = 0;
  while (kills < times && !done() && !chaosOver) {
    await sleep(1_500 + rnd() * 6_000);
    if (done() || chaosOver) break;
    await killReceivables();
    kills += 1;
    await sleep(rnd() * 1_000);
    if (chaosOver) break;
    await startReceivables();
  }
  return kills;
}

/** How long an ERP keeps re-sending one batch while receivables-svc restarts (a loaded CI machine starts it in 20 s or more). */
const POST_PATIENCE_MS = 120_000;

/**
 * POSTs a batch as an ERP would: while receivables-svc is down (killed a moment ago) the gateway
 * answers 503 (or 409 while the first try still runs), and the same request goes again with the same
 * Idempotency-Key (a 5xx keeps no record) after the Retry-After it was given. Bounded by time, not by
 * tries: how long a restart takes depends on the machine's load. Its result names the last answer.
 */
async function postUntilAnswered(tenant: TestTenant, items: unknown[]): Promise<string> {
  const key = randomUUID();
  const deadline = Date.now() + POST_PATIENCE_MS;
  for (;;) {
    const posted = await tenant.api.postIdempotent('/api/v1/accounts-receivable', items, key);
    // 503: receivables-svc is down; 409: the first try with this key is still running at the gateway.
    const retry = posted.status === 503 || posted.status === 409;
    if (!retry || Date.now() >= deadline) return `${posted.status} ${retry ? posted.text : ''}`.trim();
    const retryAfter = Number(posted.headers.get('retry-after') ?? '1');
    await sleep(Math.min(Number.isFinite(retryAfter) ? retryAfter : 1, 5) * 1_000);
  }
}

it('loses no money at Inter across 404s after create, 429s, lost notices, kill -9 and a database error after create', async () => {
  const rnd = seeded(SEED);
  console.log(`inter money chaos: seed ${SEED} (CHAOS_SEED=${SEED} repeats this run's chaos)`);
  await startReceivables();
  const tenant: TestTenant = await system.newTenant('Inter chaos');
  const integration = await bank.newIntegration();
  await setInterAccount(system.databaseUrl, dir, tenant.tenantId, integration, interBaseUrl);
  const payer = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [payer])).status).toBe(201);

  await bank.setFaults({ consult_not_found_ms: 2_000, rate_limit_per_minute: 120, drop_webhooks: true });
  fault = await failChargeIdWrites(system.databaseUrl, DB_FAULTS);

  // 60 charges, each its own value, in 3 batches; the bank fails to issue the next create before some.
  const dueDate = brasiliaDate(30);
  const items = Array.from({ length: CHARGES }, (_, i) =>
    receivablePayload(payer.client_id, receiver.url, {
      value: (30_000 + i * 101) / 100,
      items: [],
      emission_date: brasiliaDate(),
      due_date: dueDate,
    }),
  );
  const ids = items.map((item) => item.account_receivable_id);
  const values = new Map(items.map((item) => [item.account_receivable_id, cents(item.value)]));
  const valueOf = (id: string) => values.get(id) ?? Number.NaN;
  const settled = () => ids.every((id) => registeredEvents(id).length + rejectedEvents(id).length > 0);
  killing = killAtRandom(rnd, KILLS_WHILE_REGISTERING, settled);
  // Another client of the account keeps the minute's 120 list calls spent until one of our reconciliation
  // lists meets a 429 (and its Retry-After): the bank counts the account's calls, whoever makes them.
  const neighbour = new InterNeighbour(interBaseUrl, integration, caPem);
  const ourListRefused = async (ownRefused: number) =>
    ((await bank.calls(integration.client_id)).endpoints.list?.refused ?? 0) > ownRefused;
  const neighbourCalls = neighbour
    .listUntil(ourListRefused, brasiliaDate(), dueDate, NEIGHBOUR_MAX_MS)
    .finally(() => neighbour.close());
  for (let batch = 0; batch < 3; batch += 1) {
    if (batch < ISSUE_FAILURES) await bank.failNextIssue();
    expect(await postUntilAnswered(tenant, items.slice(batch * 20, batch * 20 + 20))).toBe('202');
    await sleep(rnd() * 2_000);
  }
  await waitFor(settled, 240_000, 'a registration outcome callback for each of the 60 charges').catch((err: Error) => {
    const pending = ids.filter((id) => registeredEvents(id).length + rejectedEvents(id).length === 0);
    throw new Error(`${err.message}: ${pending.length} still without one; receivables-svc said:\n${tail()}`);
  });
  const kills = await killing;
  const neighbourRefused = (await neighbourCalls).filter((status) => status === 429).length;
  if (!receivables) await startReceivables();

  // What the bank holds after the storm, charge by charge.
  let byValue = await bankByValue(integration);
  const problems: string[] = [];
  const registered: Array<{ id: string; codigo: string; value: number }> = [];
  let rejected = 0;
  for (const id of ids) {
    const boletos = byValue.get(valueOf(id)) ?? [];
    const live = boletos.filter((b) => LIVE_SITUATIONS.includes(b.cobranca.situacao));
    const [yes, no] = [registeredEvents(id), rejectedEvents(id)];
    if (yes.length + no.length !== 1)
      problems.push(`${id}: ${yes.length} registered and ${no.length} rejected callbacks (one outcome expected)`);
    if (yes.length > 0) {
      if (boletos.length !== 1)
        problems.push(`${id} registered: ${boletos.length} boletos at the bank (${situations(boletos)})`);
      const ours = boletos.find((b) => b.boleto?.nossoNumero === yes[0].payment_data.our_number);
      if (!ours)
        problems.push(`${id} registered with our_number ${yes[0].payment_data.our_number}, no such boleto at the bank`);
      else registered.push({ id, codigo: ours.cobranca.codigoSolicitacao, value: valueOf(id) });
    }
    if (no.length > 0) {
      rejected += 1;
      if (live.length > 0)
        problems.push(`${id} rejected, but ${live.length} boleto(s) live at the bank (${situations(live)})`);
    }
  }
  // Nothing at the bank that is not one of these charges.
  const known = new Set(values.values());
  for (const [value, boletos] of byValue)
    if (!known.has(value)) problems.push(`${boletos.length} boleto(s) of value ${value / 100} belong to no charge`);
  const faultsFired = await fault.fired();
  const calls = (await bank.calls(integration.client_id)).endpoints;
  const refusedToUs = Object.values(calls).reduce((n, c) => n + c.refused, 0) - neighbourRefused;
  console.log(
    `inter money chaos: ${registered.length} registered, ${rejected} rejected; ${kills} kill -9 of receivables-svc, ` +
      `${faultsFired} database errors right after a create, ${refusedToUs} of our calls answered 429 ` +
      `(the neighbour's: ${neighbourRefused}); the bank's count per endpoint (calls, most in a minute, 429): ` +
      Object.entries(calls)
        .map(([name, c]) => `${name} ${c.total}/${c.max_per_minute}/${c.refused}`)
        .join(', '),
  );
  expect(problems).toEqual([]);
  // The chaos happened: a rejection, each database error, and 429s met by our own calls.
  expect(rejected).toBeGreaterThanOrEqual(1);
  expect(faultsFired).toBe(DB_FAULTS);
  expect(refusedToUs).toBeGreaterThan(0);

  // Pay 20 at the bank: the first half while every notice is lost, a kill -9 between, the second half
  // with notices on (a notice and the reconciliation both see them: still one callback each).
  const toPay = [...registered].sort(() => rnd() - 0.5).slice(0, PAYMENTS);
  const bankPaid = new Map<string, number>();
  for (const [i, charge] of toPay.entries()) {
    if (i === PAYMENTS / 2) {
      await killReceivables();
      await bank.setFaults({ drop_webhooks: false });
      await startReceivables();
    }
    const amount = i % 3 === 0 ? charge.value - 137 : i % 3 === 1 ? charge.value + 245 : undefined;
    const view = await bank.pay(
      charge.codigo,
      i % 2 === 0 ? 'boleto' : 'pix',
      amount === undefined ? undefined : amount / 100,
    );
    bankPaid.set(charge.id, cents(view.cobranca.valorTotalRecebido));
    if (cents(view.cobranca.valorTotalRecebido) !== (amount ?? charge.value))
      problems.push(
        `${charge.id}: the bank says ${view.cobranca.valorTotalRecebido} received, ${(amount ?? charge.value) / 100} paid`,
      );
  }
  await waitFor(
    () => toPay.every((c) => paidEvents(c.id).length > 0),
    PAID_PATIENCE_MS,
    'a paid callback for each of the 20 payments',
  ).catch((err: Error) => {
    const missing = toPay.filter((c) => paidEvents(c.id).length === 0).map((c) => c.id);
    throw new Error(`${err.message}: none yet for ${missing.join(', ')}; receivables-svc said:\n${tail()}`);
  });
  // Room for a second notice, a second sweep or a redelivery to bring a duplicate.
  await sleep(3 * RECONCILE_INTERVAL_MS);

  for (const id of ids) {
    const paid = paidEvents(id);
    const expected = bankPaid.get(id);
    if (expected === undefined) {
      if (paid.length > 0) problems.push(`${id}: ${paid.length} paid callback(s), never paid at the bank`);
      continue;
    }
    if (paid.length !== 1) problems.push(`${id}: ${paid.length} paid callbacks for one payment`);
    for (const p of paid)
      if (cents(p.amount_paid) !== expected)
        problems.push(`${id}: paid callback says ${p.amount_paid}, the bank received ${expected / 100}`);
  }
  // Nothing the bank issued is left pending here: every live or paid boleto is a charge the ERP was told of.
  byValue = await bankByValue(integration);
  for (const id of ids) {
    const boletos = (byValue.get(valueOf(id)) ?? []).filter((b) => b.cobranca.situacao !== 'FALHA_EMISSAO');
    if (boletos.length > 0 && registeredEvents(id).length === 0)
      problems.push(`${id}: ${situations(boletos)} at the bank, and no registered callback`);
    if (bankPaid.has(id) && !boletos.some((b) => b.cobranca.situacao === 'RECEBIDO'))
      problems.push(`${id}: paid, but the bank shows ${situations(boletos)}`);
  }
  expect(problems).toEqual([]);
}, 420_000);

function situations(boletos: BankCharge[]): string {
  return boletos.map((b) => b.cobranca.situacao).join(', ') || 'none';
}

/** The last lines of every receivables-svc run. */
function tail(): string {
  return runs.map((p, i) => `--- run ${i + 1}\n${p.output.split('\n').slice(-15).join('\n')}`).join('\n');
}
