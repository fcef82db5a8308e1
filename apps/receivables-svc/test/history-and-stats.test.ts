import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Bus } from '@payments/bus';
import { ServiceError, Subjects, type RegistrationJob } from '@payments/contracts';
import type { ReceivableRow } from '../src/db/schema';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { receivableHistory } from '../src/domain/history';
import { recordPayment } from '../src/domain/payments';
import { registerReceivables } from '../src/domain/registration';
import { registrationStats, rollUpRegistrations } from '../src/domain/registration-stats';
import { startRegistrationRollup } from '../src/transport/rollup';
import {
  acceptOne,
  providersOf,
  rowById,
  scopeOf,
  serveOverBus,
  TestProvider,
  TZ,
  useStateFixture,
  workerDeps,
  type ServedBus,
  type StateFixture,
} from './state-fixture';

// Histories and statistics on receivables-svc's side: a receivable's history (endpoint A) and the registration
// statistics (endpoint E) with their per-minute rollup, against a real Postgres and NATS.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

const job = (r: Pick<ReceivableRow, 'id' | 'tenant_id'>): RegistrationJob => ({
  tenant_id: r.tenant_id,
  receivable_ids: [r.id],
});

async function registered(tenantId?: string, provider = new TestProvider()): Promise<ReceivableRow> {
  const r = await acceptOne(f, tenantId);
  expect(await registerReceivables(workerDeps(f, provider), job(r), 1)).toBe('done');
  return rowById(f, r.id);
}

async function rejected(tenantId?: string): Promise<ReceivableRow> {
  const provider = new TestProvider();
  provider.plan = () => 'reject';
  return registered(tenantId, provider);
}

async function expectNotFound(p: Promise<unknown>): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe('not_found');
}

describe('history', () => {
  it('answers the receipt then every state change, oldest first, by the ERP id in any spelling', async () => {
    const r = await registered();
    await recordPayment(
      f.db,
      {
        eventId: `evt-${randomUUID()}`,
        chargeId: r.provider_charge_id!,
        paidAt: new Date(),
        amountPaidCents: r.amount_cents,
        feeCents: 0,
        method: 'pix',
      },
      scopeOf(r),
      TZ,
      f.logger,
    );
    const history = await receivableHistory(f.db, r.tenant_id, r.account_receivable_id.toUpperCase());
    expect(history.items.map(({ from_state, to_state, reason }) => ({ from_state, to_state, reason }))).toEqual([
      { from_state: null, to_state: 'pending', reason: 'received' },
      { from_state: 'pending', to_state: 'approved', reason: 'paid by pix' },
    ]);
    expect(history.items[0].at).toBe(r.created_at.toISOString());
    expect(Date.parse(history.items[1].at)).toBeGreaterThanOrEqual(Date.parse(history.items[0].at));
  });

  it('shows a rejection and a cancellation', async () => {
    const no = await rejected();
    expect((await receivableHistory(f.db, no.tenant_id, no.account_receivable_id)).items.slice(1)).toMatchObject([
      { from_state: 'pending', to_state: 'rejected', reason: 'provider rejected: payer_refused' },
    ]);
    const c = await registered();
    await requestCancellation(f.db, c.tenant_id, c.account_receivable_id);
    const provider = new TestProvider();
    expect(
      await processCancellation(
        workerDeps(f, provider),
        { tenant_id: c.tenant_id, receivable_id: c.id, reason: 'requested' },
        1,
      ),
    ).toBe('done');
    expect((await receivableHistory(f.db, c.tenant_id, c.account_receivable_id)).items.slice(1)).toMatchObject([
      { from_state: 'pending', to_state: 'cancelled', reason: 'cancelled at the provider' },
    ]);
  });

  it("is not found for another tenant's receivable, an unknown id or a malformed one", async () => {
    const r = await registered();
    await expectNotFound(receivableHistory(f.db, randomUUID(), r.account_receivable_id));
    await expectNotFound(receivableHistory(f.db, r.tenant_id, randomUUID()));
    await expectNotFound(receivableHistory(f.db, r.tenant_id, 'not-a-uuid'));
  });
});

describe('registration rollup and statistics', () => {
  // The aggregates of a clock of the test's own, far from the other tests' rows (which are at now).
  const base = Date.parse('2026-03-02T10:00:00.000Z');
  const at = (minute: number, second = 0) => new Date(base + minute * 60_000 + second * 1000);

  /** A charge of `tenantId` registered at `when` (as the registration worker stamps it). */
  async function registeredAt(tenantId: string, when: Date): Promise<void> {
    const r = await acceptOne(f, tenantId);
    await f.db.updateTable('receivables').set({ registered_at: when }).where('id', '=', r.id).execute();
  }
  /** A charge of `tenantId` the provider refused at `when` (as the registration worker records it). */
  async function rejectedAt(tenantId: string, when: Date): Promise<void> {
    const r = await acceptOne(f, tenantId);
    await f.db
      .insertInto('state_history')
      .values({
        receivable_id: r.id,
        tenant_id: tenantId,
        from_state: 'pending',
        to_state: 'rejected',
        reason: 'x',
        at: when,
      })
      .execute();
  }
  const minutesOf = (tenantId: string) =>
    f.db
      .selectFrom('registrations_per_minute')
      .select(['minute', 'registered', 'failed'])
      .where('tenant_id', '=', tenantId)
      .orderBy('minute')
      .execute()
      .then((rows) =>
        rows.map((r) => ({ minute: r.minute.toISOString(), registered: r.registered, failed: r.failed })),
      );

  it('counts registrations and refusals per tenant and minute; a re-run and two rollups at once count each once', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await registeredAt(a, at(0, 5));
    await registeredAt(a, at(0, 59));
    await registeredAt(a, at(1, 0));
    await rejectedAt(a, at(1, 30));
    await registeredAt(b, at(1, 10));
    await rejectedAt(b, at(2, 0));
    await rejectedAt(b, at(2, 1));
    await registeredAt(a, at(-5)); // before the look-back of a rollup at minute 2: not counted by it

    const rollups = await Promise.all([0, 1, 2, 3].map(() => rollUpRegistrations(f.db, at(2, 30))));
    expect(rollups.filter((r) => r.ran).length).toBeGreaterThanOrEqual(1);
    const expectedA = [
      { minute: at(0).toISOString(), registered: 2, failed: 0 },
      { minute: at(1).toISOString(), registered: 1, failed: 1 },
    ];
    const expectedB = [
      { minute: at(1).toISOString(), registered: 1, failed: 0 },
      { minute: at(2).toISOString(), registered: 0, failed: 2 },
    ];
    expect(await minutesOf(a)).toEqual(expectedA);
    expect(await minutesOf(b)).toEqual(expectedB);

    // Run again, sequentially: nothing changes.
    expect(await rollUpRegistrations(f.db, at(2, 30))).toEqual({ ran: true });
    expect(await rollUpRegistrations(f.db, at(2, 45))).toEqual({ ran: true });
    expect(await minutesOf(a)).toEqual(expectedA);
    expect(await minutesOf(b)).toEqual(expectedB);

    // A late row inside the look-back is picked up by the next run; minute -5 is left as it was (absent).
    await registeredAt(b, at(2, 50));
    await rollUpRegistrations(f.db, at(3, 1));
    expect(await minutesOf(b)).toEqual([expectedB[0], { minute: at(2).toISOString(), registered: 1, failed: 2 }]);
    expect(await minutesOf(a)).toEqual(expectedA);
  });

  it('a rollup skips while another instance holds the lock', async () => {
    await f.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('receivables.registration-rollup:' || current_schema()))`.execute(
        trx,
      );
      expect(await rollUpRegistrations(f.db, at(2, 30))).toEqual({ ran: false });
    });
    expect(await rollUpRegistrations(f.db, at(2, 30))).toEqual({ ran: true });
  });

  it('fills every bucket, zeros included: an hour of 60 s buckets, a day of 900 s ones, the last holding now', async () => {
    // Three hours on: the other tests' minutes are outside the hour.
    const later = (minute: number, second = 0) => at(180 + minute, second);
    const t = randomUUID();
    const other = randomUUID();
    await registeredAt(t, later(0, 10));
    await registeredAt(t, later(1, 10));
    await rejectedAt(t, later(1, 20));
    await registeredAt(other, later(1, 15));
    await rollUpRegistrations(f.db, later(1, 40));
    const now = later(1, 40);

    const hour = await registrationStats(f.db, { window: 'hour', tenant_id: t }, now);
    expect(hour).toMatchObject({
      window: 'hour',
      bucket_seconds: 60,
      from: later(-58).toISOString(),
      to: later(2).toISOString(),
    });
    expect(hour.series).toHaveLength(60);
    expect(hour.series[0].at).toBe(later(-58).toISOString());
    expect(hour.series.slice(-2)).toEqual([
      { at: later(0).toISOString(), registered: 1, failed: 0 },
      { at: later(1).toISOString(), registered: 1, failed: 1 },
    ]);
    expect(hour.series.slice(0, -2).every((s) => s.registered === 0 && s.failed === 0)).toBe(true);
    hour.series.forEach((s, i) => expect(s.at).toBe(later(-58 + i).toISOString()));

    // Without a tenant: everyone's (the other tenant's charge too).
    const all = await registrationStats(f.db, { window: 'hour' }, now);
    expect(all.series.at(-1)).toEqual({ at: later(1).toISOString(), registered: 2, failed: 1 });

    const day = await registrationStats(f.db, { window: 'day', tenant_id: t }, now);
    expect(day).toMatchObject({ window: 'day', bucket_seconds: 900, to: later(15).toISOString() });
    expect(day.from).toBe(new Date(later(15).getTime() - 96 * 900_000).toISOString());
    expect(day.series).toHaveLength(96);
    expect(day.series.at(-1)).toEqual({ at: later(0).toISOString(), registered: 2, failed: 1 });
    expect(day.series.slice(0, -1).every((s) => s.registered === 0 && s.failed === 0)).toBe(true);

    // Nobody's: all zeros.
    const none = await registrationStats(f.db, { window: 'day', tenant_id: randomUUID() }, now);
    expect(none.series.every((s) => s.registered === 0 && s.failed === 0)).toBe(true);
  });

  it('deletes aggregates older than 8 days', async () => {
    const t = randomUUID();
    const old = new Date(base - 8 * 24 * 3_600_000 - 60_000);
    const kept = new Date(base - 8 * 24 * 3_600_000 + 60_000);
    await f.db
      .insertInto('registrations_per_minute')
      .values([
        { minute: old, tenant_id: t, registered: 1, failed: 0 },
        { minute: kept, tenant_id: t, registered: 2, failed: 0 },
      ])
      .execute();
    await rollUpRegistrations(f.db, new Date(base));
    expect((await minutesOf(t)).map((m) => m.minute)).toEqual([kept.toISOString()]);
  });

  it('counts what the registration worker records: a registration and a refusal, now', async () => {
    const t = randomUUID();
    const ok = await registered(t);
    expect(ok.registered_at).toBeInstanceOf(Date);
    const no = await rejected(t);
    expect(no.registered_at).toBeNull();
    const pending = await acceptOne(f, t); // not registered yet: not counted
    expect(pending.registered_at).toBeNull();
    await rollUpRegistrations(f.db);
    const stats = await registrationStats(f.db, { window: 'hour', tenant_id: t });
    const total = stats.series.reduce((sum, s) => ({ r: sum.r + s.registered, x: sum.x + s.failed }), { r: 0, x: 0 });
    expect(total).toEqual({ r: 1, x: 1 });
  });

  it("the service's rollup runs by itself every interval and stops cleanly", async () => {
    const t = randomUUID();
    await registered(t);
    const rollup = startRegistrationRollup(f.db, f.logger, 50);
    try {
      const deadline = Date.now() + 5_000;
      while ((await minutesOf(t)).length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 25));
    } finally {
      await rollup.stop();
    }
    expect((await minutesOf(t)).map((m) => m.registered)).toEqual([1]);
  });
});

describe('over the bus', () => {
  let served: ServedBus;
  let bus: Bus;
  beforeAll(async () => {
    served = await serveOverBus(f, providersOf(new TestProvider()));
    ({ bus } = served);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('answers a history, and not_found for another tenant', async () => {
    const r = await rejected();
    const reply = await bus.request(
      Subjects.receivables.history,
      { tenant_id: r.tenant_id, account_receivable_id: r.account_receivable_id },
      { service: 'receivables' },
    );
    expect(reply.items.map((i) => i.to_state)).toEqual(['pending', 'rejected']);
    await expectNotFound(
      bus.request(
        Subjects.receivables.history,
        { tenant_id: randomUUID(), account_receivable_id: r.account_receivable_id },
        { service: 'receivables' },
      ),
    );
  });

  it('answers registration statistics', async () => {
    const t = randomUUID();
    await registered(t);
    await rollUpRegistrations(f.db);
    const reply = await bus.request(
      Subjects.receivables.registrationStats,
      { window: 'day', tenant_id: t },
      { service: 'receivables' },
    );
    expect(reply.bucket_seconds).toBe(900);
    expect(reply.series).toHaveLength(96);
    expect(reply.series.reduce((n, s) => n + s.registered, 0)).toBe(1);
  });
});
