import { randomUUID } from 'node:crypto';
import {
  ServiceError,
  Streams,
  type CancellationJob,
  type PaidCallback,
  type RegisteredCallback,
  type RegistrationFailedCallback,
  type RegistrationJob,
} from '@payments/contracts';
import { acceptReceivables } from '../src/domain/intake';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { recordPayment } from '../src/domain/payments';
import { registerReceivables } from '../src/domain/registration';
import { consultReceivable, searchReceivables } from '../src/domain/search';
import type { ProviderPayment } from '../src/domain/ports';
import type { ReceivableRow } from '../src/db/schema';
import {
  acceptOne,
  callbacksFor,
  chargeItem,
  history,
  outbox,
  row,
  rowById,
  scopeOf,
  TestProvider,
  TZ,
  useStateFixture,
  workerDeps,
  type StateFixture,
} from './state-fixture';

// The state logic of receivables-svc (intake, registration, cancellation, payment) run against a real
// Postgres: the service's schema migrated into a throw-away database. The provider and the client
// directory are the domain's own ports, filled by test doubles; what a transition queues (jobs and
// callbacks) is read back from the outbox it writes in the same transaction.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

const deps = (provider: TestProvider) => workerDeps(f, provider);
const registrationJob = (r: Pick<ReceivableRow, 'id' | 'tenant_id'>): RegistrationJob => ({
  tenant_id: r.tenant_id,
  receivable_ids: [r.id],
});
const cancellationJob = (r: Pick<ReceivableRow, 'id' | 'tenant_id'>): CancellationJob => ({
  tenant_id: r.tenant_id,
  receivable_id: r.id,
  reason: 'requested',
});

async function registered(provider = new TestProvider(), tenantId?: string): Promise<ReceivableRow> {
  const r = await acceptOne(f, tenantId);
  expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');
  return rowById(f, r.id);
}

function payment(r: ReceivableRow, overrides: Partial<ProviderPayment> = {}): ProviderPayment {
  return {
    eventId: `evt-${randomUUID()}`,
    chargeId: r.provider_charge_id!,
    paidAt: new Date('2026-11-23T15:00:00.000Z'),
    amountPaidCents: r.amount_cents,
    feeCents: 199,
    method: 'boleto',
    ...overrides,
  };
}

async function cancellationJobsFor(r: ReceivableRow) {
  return (await outbox<CancellationJob>(f, Streams.receivableCancellations)).filter(
    (m) => m.payload.receivable_id === r.id,
  );
}

async function expectServiceError(promise: Promise<unknown>, code: string, detail?: RegExp): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe(code);
  if (detail) expect((err as ServiceError).detail).toMatch(detail);
}

describe('intake', () => {
  it('stores a batch as pending and queued, one registration job per 100; an id already used is neither stored nor queued again', async () => {
    const tenantId = randomUUID();
    const clientId = f.clients.add(tenantId);
    const batch = Array.from({ length: 150 }, () => chargeItem(clientId));
    expect(await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), batch)).toEqual({
      created: 150,
      alreadyExisting: 0,
      existing: [],
    });
    const rows = await f.db.selectFrom('receivables').selectAll().where('tenant_id', '=', tenantId).execute();
    expect(rows).toHaveLength(150);
    expect(new Set(rows.map((r) => `${r.state}/${r.registration_status}/${r.payment_type}`))).toEqual(
      new Set(['pending/queued/undefined']),
    );
    const ids = new Set(rows.map((r) => r.id));
    const jobs = (await outbox<RegistrationJob>(f, Streams.receivableRegistrations)).filter(
      (m) => m.payload.tenant_id === tenantId,
    );
    expect(jobs.map((j) => j.payload.receivable_ids.length)).toEqual([100, 50]);
    expect(jobs.map((j) => j.msg_id)).toEqual(jobs.map((j) => `reg_${j.payload.receivable_ids[0]}`));
    expect(new Set(jobs.flatMap((j) => j.payload.receivable_ids))).toEqual(ids);

    const fresh = chargeItem(clientId);
    const again = { ...batch[7], account_receivable_id: batch[7].account_receivable_id.toUpperCase(), value: 999 };
    expect(await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), [again, fresh])).toEqual({
      created: 1,
      alreadyExisting: 1,
      existing: [batch[7].account_receivable_id], // as first sent, not as spelled again
    });
    expect((await row(f, tenantId, batch[7].account_receivable_id)).amount_cents).toBe(15075); // left as it was
    const after = (await outbox<RegistrationJob>(f, Streams.receivableRegistrations)).filter(
      (m) => m.payload.tenant_id === tenantId,
    );
    expect(after).toHaveLength(3);
    expect(after[2].payload.receivable_ids).toEqual([(await row(f, tenantId, fresh.account_receivable_id)).id]);
  });

  it('stores nothing when one client of the batch is not registered, naming the item', async () => {
    const tenantId = randomUUID();
    const clientId = f.clients.add(tenantId);
    const err = await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), [
      chargeItem(clientId),
      chargeItem(randomUUID()),
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).errors).toEqual([expect.objectContaining({ path: '/1/client_id' })]);
    const count = await f.db
      .selectFrom('receivables')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    expect(
      (await outbox<RegistrationJob>(f, Streams.receivableRegistrations)).filter(
        (m) => m.payload.tenant_id === tenantId,
      ),
    ).toEqual([]);
  });
});

describe('registration', () => {
  it('pending -> registered: the charge terms go to the provider, its data is stored, the state stays pending and one registered callback is queued', async () => {
    const provider = new TestProvider();
    const r = await acceptOne(f, undefined, {
      discount_type: 'ValorFixoAteDataInformada',
      discount_value: 10,
      discount_date: '2026-12-10',
    });
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');

    expect(provider.registerCalls).toHaveLength(1);
    expect(provider.registerCalls[0][0]).toMatchObject({
      idempotencyKey: r.id,
      kind: 'hybrid_slip',
      amountCents: 15075,
      issueDate: '2026-11-23',
      dueDate: '2026-12-15',
      fineBp: 200,
      interestPerDayCents: 5,
      discount: { amountCents: 1000, until: '2026-12-10' },
      reference: r.account_receivable_id,
      descriptionLines: [{ description: 'Mensalidade', quantity: 1, priceCents: 15075 }],
    });
    const charge = provider.charges.get(r.id)!;
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({
      state: 'pending',
      registration_status: 'registered',
      provider_charge_id: charge.chargeId,
      our_number: charge.ourNumber,
      barcode: charge.barcode,
      typeable_line: charge.typeableLine,
      pix_copy_and_paste: charge.pixCopyAndPaste,
      qrcode_image_url: charge.qrcodeImageUrl,
      pdf_url: charge.pdfUrl,
      rejection_code: null,
      payment_date: null,
      payment_type: 'undefined',
    });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks).toHaveLength(1);
    expect(callbacks[0]).toMatchObject({
      event_id: `evt_registered_${r.id.replace(/-/g, '')}`,
      event_type: 'receivable.registered',
      url: r.url_callback,
    });
    expect(callbacks[0].payload as RegisteredCallback).toEqual({
      success: true,
      type: 'registered',
      accounts_receivable_id: r.account_receivable_id,
      payment_data: {
        typeable_line: charge.typeableLine,
        barcode: charge.barcode,
        our_number: charge.ourNumber,
        pix_copy_and_paste: charge.pixCopyAndPaste,
        qrcode_image: charge.qrcodeImageUrl,
        pdf: charge.pdfUrl,
      },
    });
    expect(await history(f, r.id)).toEqual([]); // still pending: no state change to record
  });

  it('pending -> rejected: the refusal is stored, the transition recorded and a failure callback queued', async () => {
    const provider = new TestProvider();
    provider.plan = () => 'reject';
    const r = await acceptOne(f);
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({
      state: 'rejected',
      registration_status: 'rejected',
      rejection_code: 'payer_refused',
      provider_charge_id: null,
      our_number: null,
    });
    expect(await history(f, r.id)).toEqual([
      { from_state: 'pending', to_state: 'rejected', reason: 'provider rejected: payer_refused' },
    ]);
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual(['receivable.registration_failed']);
    expect(callbacks[0].event_id).toBe(`evt_registered_${r.id.replace(/-/g, '')}`); // one event per receivable, success or not
    expect(callbacks[0].payload as RegistrationFailedCallback).toEqual({
      success: false,
      type: 'registered',
      accounts_receivable_id: r.account_receivable_id,
      error: { code: 'payer_refused', message: 'the bank refused the payer (test)' },
    });
  });

  it('leaves everything queued while the provider cannot be reached, backing off, and registers on a later delivery', async () => {
    const provider = new TestProvider();
    provider.down = true;
    const r = await acceptOne(f);
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toEqual({ retryInMs: 1_000 });
    expect(await registerReceivables(deps(provider), registrationJob(r), 3)).toEqual({ retryInMs: 4_000 });
    expect(await registerReceivables(deps(provider), registrationJob(r), 50)).toEqual({ retryInMs: 60_000 });
    expect(await rowById(f, r.id)).toMatchObject({
      state: 'pending',
      registration_status: 'queued',
      provider_charge_id: null,
    });
    expect(await callbacksFor(f, r)).toEqual([]);
    provider.down = false;
    expect(await registerReceivables(deps(provider), registrationJob(r), 4)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({ state: 'pending', registration_status: 'registered' });
    expect(await callbacksFor(f, r)).toHaveLength(1);
  });

  it('records each outcome of a mixed batch; the ones the provider could not take now are retried alone', async () => {
    const tenantId = randomUUID();
    const clientId = f.clients.add(tenantId);
    const [ok, refused, busy] = [
      chargeItem(clientId),
      chargeItem(clientId, { payment_method: 3 }),
      chargeItem(clientId),
    ];
    await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), [ok, refused, busy]);
    const [rOk, rRefused, rBusy] = await Promise.all(
      [ok, refused, busy].map((i) => row(f, tenantId, i.account_receivable_id)),
    );
    const provider = new TestProvider();
    provider.plan = (req) =>
      req.idempotencyKey === rRefused.id ? 'reject' : req.idempotencyKey === rBusy.id ? 'unavailable' : 'register';
    const job: RegistrationJob = { tenant_id: tenantId, receivable_ids: [rOk.id, rRefused.id, rBusy.id] };

    expect(await registerReceivables(deps(provider), job, 1)).toEqual({ retryInMs: 1_000 });
    expect((await rowById(f, rOk.id)).registration_status).toBe('registered');
    expect((await rowById(f, rRefused.id)).state).toBe('rejected');
    expect(await rowById(f, rBusy.id)).toMatchObject({ state: 'pending', registration_status: 'queued' });

    provider.plan = () => 'register';
    expect(await registerReceivables(deps(provider), job, 2)).toBe('done');
    expect(provider.registerCalls.map((call) => call.map((req) => req.idempotencyKey).sort())).toEqual([
      [rOk.id, rRefused.id, rBusy.id].sort(),
      [rBusy.id],
    ]);
    expect((await rowById(f, rBusy.id)).registration_status).toBe('registered');
    expect((await rowById(f, rRefused.id)).state).toBe('rejected'); // a rejection is final
    for (const r of [rOk, rRefused, rBusy]) expect(await callbacksFor(f, r)).toHaveLength(1);
    expect((await callbacksFor(f, rRefused))[0].payload).toMatchObject({ success: false });
  });

  it('does nothing twice when a finished job is delivered again, or when two workers run the same job at once', async () => {
    const provider = new TestProvider();
    const r = await registered(provider);
    expect(await registerReceivables(deps(provider), registrationJob(r), 2)).toBe('done');
    expect(provider.registerCalls).toHaveLength(1); // nothing left queued: the provider is not asked again
    expect(await callbacksFor(f, r)).toHaveLength(1);

    const twin = await acceptOne(f);
    const racing = new TestProvider();
    const outcomes = await Promise.all([
      registerReceivables(deps(racing), registrationJob(twin), 1),
      registerReceivables(deps(racing), registrationJob(twin), 1),
    ]);
    expect(outcomes).toEqual(['done', 'done']);
    expect(await rowById(f, twin.id)).toMatchObject({
      registration_status: 'registered',
      provider_charge_id: `chg_${twin.id}`,
    });
    expect(await callbacksFor(f, twin)).toHaveLength(1); // only the worker that moved it from queued queues the callback
  });

  it('skips a receivable cancelled before it reached the provider', async () => {
    const provider = new TestProvider();
    const r = await acceptOne(f);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([]); // nothing at the provider to cancel
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');
    expect(provider.registerCalls).toEqual([]);
    expect(await rowById(f, r.id)).toMatchObject({
      state: 'cancelled',
      registration_status: 'skipped',
      provider_charge_id: null,
    });
    expect(await history(f, r.id)).toEqual([
      { from_state: 'pending', to_state: 'cancelled', reason: 'cancelled before registration' },
    ]);
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual(['receivable.cancelled']);
  });

  it('cancels at the provider, quietly, a charge it registered while the receivable was being cancelled', async () => {
    const provider = new TestProvider();
    const r = await acceptOne(f);
    provider.whileRegistering = async () => {
      await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
      expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    };
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({
      state: 'cancelled',
      registration_status: 'registered',
      provider_charge_id: `chg_${r.id}`,
    });
    // No registered callback for a cancelled receivable; a cleanup job for the stray charge instead.
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual(['receivable.cancelled']);
    const cleanup = (await cancellationJobsFor(after)).find((m) => m.payload.reason === 'cleanup');
    expect(cleanup).toEqual({
      msg_id: `cleanup_${r.id}`,
      payload: { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'cleanup' },
    });
    expect(await processCancellation(deps(provider), cleanup!.payload, 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([`chg_${r.id}`]);
    expect(await callbacksFor(f, r)).toHaveLength(1); // the cleanup tells the ERP nothing more
  });
});

describe('cancellation', () => {
  it('pending (registered) -> cancel queued -> cancelled at the provider, with one success callback', async () => {
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id.toUpperCase()); // ids match whatever their case
    const queued = await rowById(f, r.id);
    expect(queued).toMatchObject({ state: 'pending', cancellation_requests: 1 });
    expect(queued.cancel_requested_at).toBeInstanceOf(Date);
    expect(await cancellationJobsFor(r)).toEqual([
      { msg_id: `cancel_${r.id}_1`, payload: { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'requested' } },
    ]);

    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([`chg_${r.id}`]);
    expect(await rowById(f, r.id)).toMatchObject({ state: 'cancelled', cancel_requested_at: null });
    expect(await history(f, r.id)).toEqual([
      { from_state: 'pending', to_state: 'cancelled', reason: 'cancelled at the provider' },
    ]);
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual(['receivable.registered', 'receivable.cancelled']);
    expect(callbacks[1]).toMatchObject({ event_id: `evt_cancel1_${r.id.replace(/-/g, '')}`, url: r.url_callback });
    expect(callbacks[1].payload).toEqual({
      status: 'success',
      accounts_receivable_id: r.account_receivable_id,
      message: 'the receivable was cancelled',
    });

    // The job delivered again: nothing more happens.
    expect(await processCancellation(deps(provider), cancellationJob(r), 2)).toBe('done');
    expect(provider.cancelCalls).toHaveLength(1);
    expect(await callbacksFor(f, r)).toHaveLength(2);
  });

  it('accepts a cancel already queued again without queueing a second one', async () => {
    const r = await registered();
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    await Promise.all([
      requestCancellation(f.db, r.tenant_id, r.account_receivable_id),
      requestCancellation(f.db, r.tenant_id, r.account_receivable_id),
    ]);
    expect((await rowById(f, r.id)).cancellation_requests).toBe(1);
    expect(await cancellationJobsFor(r)).toHaveLength(1);
  });

  it('refuses (conflict) once cancelled, paid or rejected, and does not know ids of other tenants (not found); nothing is queued', async () => {
    const provider = new TestProvider();
    const cancelled = await registered(provider);
    await requestCancellation(f.db, cancelled.tenant_id, cancelled.account_receivable_id);
    await processCancellation(deps(provider), cancellationJob(cancelled), 1);
    const paid = await registered(provider);
    expect(await recordPayment(f.db, payment(paid), scopeOf(paid), TZ, f.logger)).toBe('approved');
    const rejecting = new TestProvider();
    rejecting.plan = () => 'reject';
    const rejected = await registered(rejecting);

    await expectServiceError(
      requestCancellation(f.db, cancelled.tenant_id, cancelled.account_receivable_id),
      'conflict',
      /already cancelled/,
    );
    await expectServiceError(requestCancellation(f.db, paid.tenant_id, paid.account_receivable_id), 'conflict', /paid/);
    await expectServiceError(
      requestCancellation(f.db, rejected.tenant_id, rejected.account_receivable_id),
      'conflict',
      /rejected/,
    );
    await expectServiceError(requestCancellation(f.db, randomUUID(), paid.account_receivable_id), 'not_found');
    await expectServiceError(requestCancellation(f.db, paid.tenant_id, randomUUID()), 'not_found');
    expect(await cancellationJobsFor(cancelled)).toHaveLength(1);
    expect(await cancellationJobsFor(paid)).toEqual([]);
    expect(await cancellationJobsFor(rejected)).toEqual([]);
    expect((await rowById(f, cancelled.id)).cancellation_requests).toBe(1);
  });

  it('keeps the cancellation queued while the provider cannot be reached, and completes it later', async () => {
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    provider.cancelOutcome = 'unavailable';
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toEqual({ retryInMs: 1_000 });
    expect(await processCancellation(deps(provider), cancellationJob(r), 2)).toEqual({ retryInMs: 2_000 });
    const waiting = await rowById(f, r.id);
    expect(waiting.state).toBe('pending');
    expect(waiting.cancel_requested_at).not.toBeNull();
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual(['receivable.registered']);
    provider.cancelOutcome = 'cancelled';
    expect(await processCancellation(deps(provider), cancellationJob(r), 3)).toBe('done');
    expect((await rowById(f, r.id)).state).toBe('cancelled');
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual([
      'receivable.registered',
      'receivable.cancelled',
    ]);
  });

  it('answers an error callback when the provider says the charge is no longer open (paid there); the state waits for the payment', async () => {
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    provider.cancelOutcome = 'not_open';
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({ state: 'pending', cancel_requested_at: null });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual(['receivable.registered', 'receivable.cancellation_failed']);
    expect(callbacks[1].payload).toEqual({
      status: 'error',
      accounts_receivable_id: r.account_receivable_id,
      message: 'the receivable was paid before it could be cancelled',
    });
    // The payment then arrives: approved, with its own paid callback.
    expect(await recordPayment(f.db, payment(r), scopeOf(r), TZ, f.logger)).toBe('approved');
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual([
      'receivable.registered',
      'receivable.cancellation_failed',
      'receivable.paid',
    ]);
  });

  it('answers an error callback when the provider refuses to cancel for good; the charge stays open', async () => {
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    provider.cancelOutcome = 'refused';
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({ state: 'pending', cancel_requested_at: null });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual(['receivable.registered', 'receivable.cancellation_failed']);
    expect(callbacks[1].payload).toEqual({
      status: 'error',
      accounts_receivable_id: r.account_receivable_id,
      message: 'the provider refused to cancel the charge; it stays open',
    });
  });

  it('answers an error callback when registration is rejected while the cancellation waits', async () => {
    const provider = new TestProvider();
    provider.plan = () => 'reject';
    const r = await acceptOne(f);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    // The registration job runs first: the provider refuses the charge.
    expect(await registerReceivables(deps(provider), registrationJob(r), 1)).toBe('done');
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([]);
    expect(await rowById(f, r.id)).toMatchObject({ state: 'rejected', cancel_requested_at: null });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual([
      'receivable.registration_failed',
      'receivable.cancellation_failed',
    ]);
    expect(callbacks[1].payload).toEqual({
      status: 'error',
      accounts_receivable_id: r.account_receivable_id,
      message: 'the receivable was rejected by the provider; there is nothing to cancel',
    });
  });

  it('answers every accepted cancel with one result callback: paid while the cancellation is queued gives an error callback beside the paid one', async () => {
    // The rule (docs/api.md, Receivables): "Every cancel answered 202 gets exactly one cancellation result callback:
    // if the charge is paid (or rejected) before the provider cancels it, that callback is
    // { status: "error", accounts_receivable_id, message } saying why, beside the paid callback."
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id); // answered 202
    // The payment webhook is applied before the cancellation job runs.
    expect(await recordPayment(f.db, payment(r, { method: 'pix', feeCents: 149 }), scopeOf(r), TZ, f.logger)).toBe(
      'approved',
    );
    expect(await processCancellation(deps(provider), cancellationJob(r), 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([]); // paid: nothing to cancel at the provider
    expect(await rowById(f, r.id)).toMatchObject({ state: 'approved', payment_type: 'pix', cancel_requested_at: null });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type)).toEqual([
      'receivable.registered',
      'receivable.paid',
      'receivable.cancellation_failed',
    ]);
    expect(callbacks[2]).toMatchObject({ event_id: `evt_cancel1_${r.id.replace(/-/g, '')}` });
    expect(callbacks[2].payload).toEqual({
      status: 'error',
      accounts_receivable_id: r.account_receivable_id,
      message: 'the receivable was paid before it could be cancelled',
    });
  });
});

describe('payment', () => {
  it.each([
    ['boleto', 199, 'Boleto'],
    ['pix', 149, 'Pix'],
    ['manual', 0, 'Manual'],
  ] as const)(
    'pending -> approved by %s: payment date, amount paid, fee and type stored, the transition recorded, one paid callback',
    async (method, feeCents, label) => {
      const r = await registered();
      const paidAt = new Date('2026-11-23T15:04:05.120Z');
      expect(
        await recordPayment(
          f.db,
          payment(r, { method, feeCents, paidAt, amountPaidCents: 15000 }),
          scopeOf(r),
          TZ,
          f.logger,
        ),
      ).toBe('approved');
      const after = await rowById(f, r.id);
      expect(after).toMatchObject({
        state: 'approved',
        amount_paid_cents: 15000,
        fee_cents: feeCents,
        payment_type: method,
        amount_cents: 15075,
      });
      expect(after.payment_date?.toISOString()).toBe(paidAt.toISOString());
      expect(await history(f, r.id)).toEqual([
        {
          from_state: 'pending',
          to_state: 'approved',
          // Paid below the amount due (a discount, say): recorded as received, and said.
          reason: `paid by ${method}; 150.00 received, below the amount due of 150.75`,
        },
      ]);
      const paid = (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid');
      expect(paid).toHaveLength(1);
      expect(paid[0].event_id).toBe(`evt_paid_${r.id.replace(/-/g, '')}`);
      expect(paid[0].payload as PaidCallback).toEqual({
        success: true,
        type: 'paid',
        accounts_receivable_id: r.account_receivable_id,
        payment_date: '2026-11-23T12:04:05.120',
        amount_paid: 150,
        fee_amount: feeCents / 100,
        payment_type: label,
      });
      expect(await consultReceivable(f.db, r.tenant_id, r.account_receivable_id, TZ)).toEqual({
        accounts_receivable_id: r.account_receivable_id,
        client_name: 'Maria da Silva',
        status_payment: 'Aprovada',
        payment_type: label,
        payment_date: '2026-11-23T12:04:05.120',
        amount_due: 150.75,
        amount_paid: 150,
        fee_amount: feeCents / 100,
      });
    },
  );

  it('counts a provider event once, and a second payment of a paid charge changes nothing', async () => {
    const r = await registered();
    const first = payment(r);
    expect(await recordPayment(f.db, first, scopeOf(r), TZ, f.logger)).toBe('approved');
    expect(await recordPayment(f.db, first, scopeOf(r), TZ, f.logger)).toBe('duplicate');
    const paidOnce = await rowById(f, r.id);
    expect(
      await recordPayment(
        f.db,
        payment(r, { method: 'pix', feeCents: 1, amountPaidCents: 1, paidAt: new Date() }),
        scopeOf(r),
        TZ,
        f.logger,
      ),
    ).toBe('already_paid');
    const after = await rowById(f, r.id);
    expect({ ...after, updated_at: null }).toEqual({ ...paidOnce, updated_at: null });
    expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
    expect(await history(f, r.id)).toHaveLength(1);
  });

  it('refuses a payment for a charge it does not know (yet) without consuming the event, so the provider retry applies it', async () => {
    const unknown: ProviderPayment = {
      eventId: `evt-${randomUUID()}`,
      chargeId: `chg_${randomUUID()}`,
      paidAt: new Date(),
      amountPaidCents: 100,
      feeCents: 1,
      method: 'pix',
    };
    await expectServiceError(recordPayment(f.db, unknown, 'legacy', TZ, f.logger), 'not_found');
    const stored = await f.db
      .selectFrom('provider_events')
      .select('event_id')
      .where('event_id', '=', unknown.eventId)
      .execute();
    expect(stored).toEqual([]);
  });

  async function refundRows(r: ReceivableRow) {
    return f.db.selectFrom('payments_needing_refund').selectAll().where('receivable_id', '=', r.id).execute();
  }

  it('keeps a payment for a charge the provider had cancelled for a refund: still cancelled, no paid callback, the operator warned without payer data', async () => {
    // The bank sandbox refuses to pay a cancelled charge, but a real bank may settle one anyway. The ERP
    // was told the charge is void, so it stays cancelled; the money is recorded for a refund decision.
    const provider = new TestProvider();
    const r = await registered(provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    await processCancellation(deps(provider), cancellationJob(r), 1);
    const cancelled = await rowById(f, r.id);
    const paid = payment(r, { method: 'pix', feeCents: 149, amountPaidCents: 15075 });
    const warn = jest.spyOn(f.logger, 'warn');
    try {
      expect(await recordPayment(f.db, paid, scopeOf(r), TZ, f.logger)).toBe('needs_refund');
      expect(warn).toHaveBeenCalledTimes(1);
      const [fields, message] = warn.mock.calls[0] as unknown as [Record<string, unknown>, string];
      expect(message).toMatch(/cancelled charge.*refund/);
      expect(fields).toMatchObject({
        receivableId: r.id,
        tenantId: r.tenant_id,
        chargeState: 'cancelled',
        providerChargeId: r.provider_charge_id,
        eventId: paid.eventId,
        amountPaidCents: 15075,
      });
      const logged = JSON.stringify([fields, message]);
      expect(logged).not.toContain('Maria');
      expect(logged).not.toMatch(/529\.?982\.?247-?25|52998224725/);
    } finally {
      warn.mockRestore();
    }
    const after = await rowById(f, r.id);
    expect({ ...after, updated_at: null }).toEqual({ ...cancelled, updated_at: null });
    expect((await history(f, r.id)).map((h) => `${h.from_state}->${h.to_state}`)).toEqual(['pending->cancelled']);
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual([
      'receivable.registered',
      'receivable.cancelled',
    ]);
    expect(await refundRows(r)).toEqual([
      {
        event_id: paid.eventId,
        receivable_id: r.id,
        tenant_id: r.tenant_id,
        provider_account_id: r.provider_account_id,
        provider_charge_id: r.provider_charge_id,
        charge_state: 'cancelled',
        paid_at: paid.paidAt,
        amount_paid_cents: 15075,
        fee_cents: 149,
        payment_type: 'pix',
        recorded_at: expect.any(Date),
      },
    ]);
    // The provider's retry of the same event changes nothing; a second payment is a second refund.
    expect(await recordPayment(f.db, paid, scopeOf(r), TZ, f.logger)).toBe('duplicate');
    expect(await refundRows(r)).toHaveLength(1);
    expect(await recordPayment(f.db, payment(r), scopeOf(r), TZ, f.logger)).toBe('needs_refund');
    expect(await refundRows(r)).toHaveLength(2);
    expect((await rowById(f, r.id)).state).toBe('cancelled');
  });

  it('keeps a payment for a charge the provider had rejected for a refund: still rejected, no paid callback', async () => {
    const rejecting = new TestProvider();
    rejecting.plan = () => 'reject';
    const r = await registered(rejecting);
    expect(r.state).toBe('rejected');
    // A bank that issued the charge and then refused it: its id is known, so its payment can be matched.
    await f.db
      .updateTable('receivables')
      .set({ provider_charge_id: `chg_${r.id}` })
      .where('id', '=', r.id)
      .execute();
    const rejected = await rowById(f, r.id);
    expect(await recordPayment(f.db, payment(rejected), scopeOf(r), TZ, f.logger)).toBe('needs_refund');
    expect(await rowById(f, r.id)).toMatchObject({ state: 'rejected', payment_date: null, amount_paid_cents: null });
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual(['receivable.registration_failed']);
    expect(await refundRows(r)).toEqual([
      expect.objectContaining({ charge_state: 'rejected', amount_paid_cents: r.amount_cents, payment_type: 'boleto' }),
    ]);
  });
});

describe('search by state', () => {
  it('selects each state alone, and all of them with "all", by emission date then id', async () => {
    const tenantId = randomUUID();
    const provider = new TestProvider();
    const at = (date: string) => ({ emission_date: date });
    const pending = await acceptOne(f, tenantId, at('2026-03-04'));
    const approved = await acceptOne(f, tenantId, at('2026-03-01'));
    const cancelled = await acceptOne(f, tenantId, at('2026-03-03'));
    const rejected = await acceptOne(f, tenantId, at('2026-03-02'));
    await acceptOne(f, tenantId, at('2026-04-01')); // out of range
    provider.plan = (req) => (req.idempotencyKey === rejected.id ? 'reject' : 'register');
    await registerReceivables(
      deps(provider),
      { tenant_id: tenantId, receivable_ids: [pending.id, approved.id, cancelled.id, rejected.id] },
      1,
    );
    await recordPayment(
      f.db,
      payment(await rowById(f, approved.id), { method: 'manual', feeCents: 0 }),
      scopeOf(approved),
      TZ,
      f.logger,
    );
    await requestCancellation(f.db, tenantId, cancelled.account_receivable_id);
    await processCancellation(deps(provider), cancellationJob(cancelled), 1);

    const search = async (state: 'all' | 'pending' | 'approved' | 'rejected' | 'cancelled') =>
      (
        await searchReceivables(
          f.db,
          tenantId,
          { state, start_date: '2026-03-01', end_date: '2026-03-31' },
          10,
          undefined,
          TZ,
        )
      ).items;
    expect((await search('pending')).map((i) => [i.accounts_receivable_id, i.status_payment, i.paymento_type])).toEqual(
      [[pending.account_receivable_id, 'Pendente', 'naodefinido']],
    );
    expect(
      (await search('approved')).map((i) => [i.accounts_receivable_id, i.status_payment, i.paymento_type]),
    ).toEqual([[approved.account_receivable_id, 'Aprovada', 'Manual']]);
    expect((await search('rejected')).map((i) => [i.accounts_receivable_id, i.status_payment])).toEqual([
      [rejected.account_receivable_id, 'Rejeitada'],
    ]);
    expect((await search('cancelled')).map((i) => [i.accounts_receivable_id, i.status_payment])).toEqual([
      [cancelled.account_receivable_id, 'Cancelada'],
    ]);
    expect((await search('all')).map((i) => i.accounts_receivable_id)).toEqual(
      [approved, rejected, cancelled, pending].map((r) => r.account_receivable_id),
    );
  });
});
