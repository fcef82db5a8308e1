import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Streams, type CancellationJob, type RegistrationJob } from '@payments/contracts';
import { workCounts } from '@payments/metrics';
import { acceptReceivables } from '../src/domain/intake';
import { registerReceivables } from '../src/domain/registration';
import {
  callbacksFor,
  chargeItem,
  outbox,
  row,
  TestProvider,
  useStateFixture,
  workerDeps,
  type StateFixture,
} from './state-fixture';

// Registration's Postgres round trips for a job whose charges are all registered: the read of the
// receivables with their durable marks, and the results with their callbacks, one statement each.

let f: StateFixture;
useStateFixture((fixture) => (f = fixture));

/** Accepts `count` charges of a new tenant in one request; returns them and their registration job. */
async function accepted(count: number) {
  const tenantId = randomUUID();
  const clientId = f.clients.add(tenantId);
  const items = Array.from({ length: count }, () => chargeItem(clientId));
  await acceptReceivables(f.db, f.clients, tenantId, f.accountFor(tenantId), items);
  const rows = await Promise.all(items.map((i) => row(f, tenantId, i.account_receivable_id)));
  const jobs = await outbox<RegistrationJob>(f, Streams.receivableRegistrations);
  const job = jobs.find((j) => j.payload.tenant_id === tenantId);
  if (!job) throw new Error('no registration job was queued');
  await f.accounts.forReceivable(rows[0].provider_account_id); // the account is read once, then kept
  return { rows, job: job.payload };
}

it('records a job whose charges all registered in two statements, each its own commit, with every callback and mark', async () => {
  const { rows, job } = await accepted(3);
  const before = workCounts();
  expect(await registerReceivables(workerDeps(f, new TestProvider()), job, 1)).toBe('done');
  const after = workCounts();
  expect(after.dbStatements - before.dbStatements).toBe(2);
  expect(after.dbCommits - before.dbCommits).toBe(2);
  const marks = await f.db
    .selectFrom('registration_marks')
    .select(['receivable_id', 'bank_reference', 'provider_account_id'])
    .where(
      'receivable_id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  expect(marks.sort((a, b) => a.receivable_id.localeCompare(b.receivable_id))).toEqual(
    rows
      .map((r) => ({ receivable_id: r.id, bank_reference: r.id, provider_account_id: r.provider_account_id }))
      .sort((a, b) => a.receivable_id.localeCompare(b.receivable_id)),
  );

  for (const r of rows) {
    const stored = await row(f, r.tenant_id, r.account_receivable_id);
    expect(stored).toMatchObject({ state: 'pending', registration_status: 'registered' });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks).toHaveLength(1);
    expect(callbacks[0]).toMatchObject({
      event_type: 'receivable.registered',
      url: r.url_callback,
      payload: {
        accounts_receivable_id: r.account_receivable_id_as_sent,
        payment_data: {
          our_number: stored.our_number,
          barcode: stored.barcode,
          typeable_line: stored.typeable_line,
          pix_copy_and_paste: stored.pix_copy_and_paste,
          qrcode_image: stored.qrcode_image_url,
          pdf: stored.pdf_url,
        },
      },
    });
  }
});

it('a receivable cancelled while the bank registered it: the charges are written alone, the new one cancelled quietly', async () => {
  const { rows, job } = await accepted(3);
  const bank = new TestProvider();
  bank.whileRegistering = async () => {
    await sql`update receivables set state = 'cancelled' where id = ${rows[1].id}`.execute(f.db);
  };
  expect(await registerReceivables(workerDeps(f, bank), job, 1)).toBe('done');
  for (const r of rows)
    expect(await row(f, r.tenant_id, r.account_receivable_id)).toMatchObject({ registration_status: 'registered' });
  expect((await callbacksFor(f, rows[0])).map((c) => c.event_type)).toEqual(['receivable.registered']);
  expect(await callbacksFor(f, rows[1])).toEqual([]);
  expect((await callbacksFor(f, rows[2])).map((c) => c.event_type)).toEqual(['receivable.registered']);
  const cleanups = (await outbox<CancellationJob>(f, Streams.receivableCancellations)).filter(
    (m) => m.payload.receivable_id === rows[1].id,
  );
  expect(cleanups.map((m) => m.payload.reason)).toEqual(['cleanup']);
});
