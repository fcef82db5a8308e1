import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { ReceivableStates, ServiceError } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { createMetricsRegistry, MetricNames } from '@payments/metrics';
import type { ReceivableRow } from '../src/db/schema';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { acceptReceivables } from '../src/domain/intake';
import { recordPayment } from '../src/domain/payments';
import { registerReceivables } from '../src/domain/registration';
import { chargesByState, foldStateCounts } from '../src/domain/state-counts';
import { receivablesMetrics } from '../src/transport/metrics';
import {
  acceptOne,
  chargeItem,
  rowById,
  scopeOf,
  TestProvider,
  TZ,
  useStateFixture,
  workerDeps,
  type StateFixture,
} from './state-fixture';

// Charges by state for the metrics come from counters kept as states change (triggers on receivables,
// folded now and then), never from counting the receivables: they follow every create, registration,
// rejection, payment and cancellation exactly, concurrent ones included.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

/** The oracle: the receivables themselves, counted. */
async function counted(): Promise<Record<string, number>> {
  const { rows } = await sql<{ state: string; n: string }>`
    select state, count(*) as n from receivables group by state`.execute(f.db);
  const counts: Record<string, number> = Object.fromEntries(ReceivableStates.map((s) => [s, 0]));
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

async function counters(): Promise<Record<string, number>> {
  return Object.fromEntries(await chargesByState(f.db));
}

async function register(r: ReceivableRow, outcome: 'register' | 'reject'): Promise<ReceivableRow> {
  const provider = new TestProvider();
  provider.plan = () => outcome;
  expect(
    await registerReceivables(workerDeps(f, provider), { tenant_id: r.tenant_id, receivable_ids: [r.id] }, 1),
  ).toBe('done');
  return rowById(f, r.id);
}

async function pay(r: ReceivableRow, eventId = `evt-${randomUUID()}`): Promise<void> {
  await recordPayment(
    f.db,
    {
      eventId,
      chargeId: r.provider_charge_id ?? '',
      paidAt: new Date(),
      amountPaidCents: r.amount_cents,
      feeCents: 0,
      method: 'pix',
    },
    scopeOf(r),
    TZ,
    f.logger,
  );
}

/** Requests and carries out a cancellation; a charge paid meanwhile refuses it (conflict), as it should. */
async function cancel(r: ReceivableRow): Promise<void> {
  try {
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'conflict') return;
    throw err;
  }
  await processCancellation(
    workerDeps(f, new TestProvider()),
    { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'requested' },
    1,
  );
}

it('follow creates, registrations, rejections, payments and cancellations one by one', async () => {
  const start = await counters();
  const expectMoved = async (moved: Record<string, number>) =>
    expect(await counters()).toEqual(Object.fromEntries(ReceivableStates.map((s) => [s, start[s] + (moved[s] ?? 0)])));
  const a = await acceptOne(f);
  const b = await acceptOne(f);
  const c = await acceptOne(f);
  await expectMoved({ pending: 3 });
  // The same ERP id sent again is skipped by intake, and not counted.
  const item = chargeItem(f.clients.add(a.tenant_id), { account_receivable_id: a.account_receivable_id });
  await acceptReceivables(f.db, f.clients, a.tenant_id, f.accountFor(a.tenant_id), [item]);
  await expectMoved({ pending: 3 });
  const registeredA = await register(a, 'register');
  await register(b, 'reject');
  await expectMoved({ pending: 2, rejected: 1 });
  await pay(registeredA);
  // The same payment again changes nothing.
  const again = `evt-${randomUUID()}`;
  await pay(await rowById(f, a.id), again);
  await pay(await rowById(f, a.id), again);
  await expectMoved({ pending: 1, rejected: 1, approved: 1 });
  await cancel(await register(c, 'register'));
  await expectMoved({ rejected: 1, approved: 1, cancelled: 1 });
  expect(await counters()).toEqual(await counted());
  // Folded, the same.
  await foldStateCounts(f.db);
  expect(await counters()).toEqual(await counted());
});

it('stay exact under concurrent changes and folds', async () => {
  const accepted = await Promise.all(Array.from({ length: 40 }, () => acceptOne(f)));
  const registered = await Promise.all(accepted.map((r, i) => register(r, i % 5 === 0 ? 'reject' : 'register')));
  const folding = (async () => {
    for (let i = 0; i < 20; i++) await foldStateCounts(f.db);
  })();
  // Payments, double payments and cancellations of the same charges, all at once.
  await Promise.all(
    registered.flatMap((r, i) => {
      if (i % 5 === 0) return [];
      if (i % 3 === 0) return [cancel(r), pay(r)];
      return [pay(r, `evt-${r.id}`), pay(r, `evt-${r.id}`), cancel(r)];
    }),
  );
  await folding;
  expect(await counters()).toEqual(await counted());
  await Promise.all([foldStateCounts(f.db), foldStateCounts(f.db), foldStateCounts(f.db)]);
  expect(await counters()).toEqual(await counted());
  const { rows } = await sql<{ n: string }>`select count(*) as n from state_count_changes`.execute(f.db);
  expect(Number(rows[0]?.n)).toBe(0);
});

it('a metrics scrape reads no receivables: it answers while the table is locked against any read', async () => {
  const r = await acceptOne(f);
  await register(r, 'reject');
  const registry = createMetricsRegistry('receivables-test');
  receivablesMetrics(registry, { db: f.db, logger: createLogger('receivables-test', 'silent'), outboxStreams: [] });
  const expected = await counted();
  // On one connection of the pool; the scrape takes others.
  await f.db.transaction().execute(async (trx) => {
    await sql`lock table receivables in access exclusive mode`.execute(trx);
    const text = await withinMs(registry.metrics(), 5_000, 'the scrape waited for receivables');
    for (const state of ReceivableStates) {
      const line = new RegExp(`^${MetricNames.chargesByState}\\{[^}]*state="${state}"[^}]*\\} (\\d+)$`, 'm').exec(text);
      expect([state, Number(line?.[1])]).toEqual([state, expected[state]]);
    }
  });
});

/** The promise's value, or a rejection after `ms` (the timer cleared either way). */
async function withinMs<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
