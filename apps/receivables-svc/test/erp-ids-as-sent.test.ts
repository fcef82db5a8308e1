import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Streams, type CallbackRequestBatch } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { acceptReceivables } from '../src/domain/intake';
import { listInstallments } from '../src/domain/installments';
import { recordPayment } from '../src/domain/payments';
import { registerReceivables } from '../src/domain/registration';
import { consultReceivable, searchReceivables } from '../src/domain/search';
import {
  chargeItem,
  outbox,
  row,
  scopeOf,
  TestProvider,
  TZ,
  useStateFixture,
  workerDeps,
  type StateFixture,
} from './state-fixture';

// docs/architecture.md: the ERP's ids match in any letter case and come back exactly as it sent them at creation.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

/** A UUID in mixed case: neither its lower- nor its upper-case form. */
function mixedCase(): string {
  return `aBcD${randomUUID().slice(4).toUpperCase()}`;
}

/** The accounts_receivable_id of every callback queued for this tenant, with its event type. */
async function callbackIds(tenantId: string): Promise<Array<[string, string | undefined]>> {
  const batches = await outbox<CallbackRequestBatch>(f, Streams.callbackRequests);
  return batches
    .flatMap((b) => b.payload.requests)
    .filter((r) => r.tenant_id === tenantId)
    .map((r) => [r.event_type, (r.payload as { accounts_receivable_id?: string }).accounts_receivable_id]);
}

it('keeps the ids as sent and answers with them, whatever spelling later requests use', async () => {
  const tenantId = randomUUID();
  const clientId = f.clients.add(tenantId);
  const sent = { account_receivable_id: mixedCase(), payment_slip_id: mixedCase(), client_id: clientId.toUpperCase() };
  const paidId = mixedCase();
  const account = f.accountFor(tenantId);
  expect(
    await acceptReceivables(f.db, f.clients, tenantId, account, [
      chargeItem(clientId, sent),
      chargeItem(clientId, { ...sent, account_receivable_id: paidId, due_date: '2027-01-15' }),
    ]),
  ).toEqual({ created: 2, alreadyExisting: 0, existing: [] });
  // The same id in lower case is the same receivable: not created again.
  expect(
    await acceptReceivables(f.db, f.clients, tenantId, account, [
      chargeItem(clientId, { ...sent, account_receivable_id: sent.account_receivable_id.toLowerCase(), value: 9 }),
    ]),
  ).toEqual({ created: 0, alreadyExisting: 1, existing: [sent.account_receivable_id] }); // named as first sent

  const stored = await row(f, tenantId, sent.account_receivable_id.toLowerCase());
  expect(stored).toMatchObject({
    account_receivable_id: sent.account_receivable_id.toLowerCase(),
    account_receivable_id_as_sent: sent.account_receivable_id,
    client_id_as_sent: sent.client_id,
    payment_slip_id_as_sent: sent.payment_slip_id,
    amount_cents: 15075,
  });

  const provider = new TestProvider();
  const paid = await row(f, tenantId, paidId);
  expect(
    await registerReceivables(
      workerDeps(f, provider),
      { tenant_id: tenantId, receivable_ids: [stored.id, paid.id] },
      1,
    ),
  ).toBe('done');
  await recordPayment(
    f.db,
    {
      eventId: randomUUID(),
      chargeId: provider.charges.get(paid.id)!.chargeId,
      paidAt: new Date('2026-12-01T12:00:00Z'),
      amountPaidCents: 15075,
      feeCents: 0,
      method: 'pix',
    },
    scopeOf(paid),
    TZ,
    f.logger,
  );
  await requestCancellation(f.db, tenantId, sent.account_receivable_id.toLowerCase());
  await processCancellation(
    workerDeps(f, provider),
    { tenant_id: tenantId, receivable_id: stored.id, reason: 'requested' },
    1,
  );
  expect(await callbackIds(tenantId)).toEqual([
    ['receivable.registered', sent.account_receivable_id],
    ['receivable.registered', paidId],
    ['receivable.paid', paidId],
    ['receivable.cancelled', sent.account_receivable_id],
  ]);

  for (const asked of [sent.account_receivable_id.toLowerCase(), sent.account_receivable_id.toUpperCase()])
    expect((await consultReceivable(f.db, tenantId, asked, TZ)).accounts_receivable_id).toBe(
      sent.account_receivable_id,
    );
  const page = await searchReceivables(
    f.db,
    tenantId,
    { state: 'all', start_date: '2026-01-01', end_date: '2026-12-31' },
    10,
    undefined,
    TZ,
  );
  expect(page.items.map((i) => i.accounts_receivable_id).sort()).toEqual([sent.account_receivable_id, paidId].sort());

  const installments = await listInstallments(f.db, tenantId, sent.payment_slip_id.toLowerCase());
  expect(installments.payment_slip_id).toBe(sent.payment_slip_id);
  expect(installments.installments).toHaveLength(1); // the cancelled one is left out
});

it('the upgrade gives receivables stored before it their stored spelling', async () => {
  const test = await createTestDatabase();
  const db = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA });
  try {
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0007'));
    await migrateToLatest(db, SCHEMA, before);
    const [id, tenantId, arId, clientId, slipId] = Array.from({ length: 5 }, () => randomUUID().toUpperCase());
    await sql`insert into receivables (id, tenant_id, account_receivable_id, client_id, payment_slip_id, payment_method,
        url_callback, emission_date, due_date, amount_cents, discount_type, items, payer, client_name, state, registration_status)
      values (${id}, ${tenantId}, ${arId}, ${clientId}, ${slipId}, 1, 'https://erp.example.com/cb', '2026-01-01',
        '2026-02-01', 100, 'NaoTemDesconto', '[]', '{}', 'Ana', 'pending', 'queued')`.execute(db);
    await migrateToLatest(db, SCHEMA, migrations);
    const upgraded = await db
      .selectFrom('receivables')
      .select(['account_receivable_id_as_sent', 'client_id_as_sent', 'payment_slip_id_as_sent'])
      .executeTakeFirstOrThrow();
    expect(upgraded).toEqual({
      account_receivable_id_as_sent: arId.toLowerCase(),
      client_id_as_sent: clientId.toLowerCase(),
      payment_slip_id_as_sent: slipId.toLowerCase(),
    });
    const consult = await consultReceivable(db, tenantId.toLowerCase(), arId, TZ);
    expect(consult.accounts_receivable_id).toBe(arId.toLowerCase());
  } finally {
    await db.destroy();
    await test.drop();
  }
});
