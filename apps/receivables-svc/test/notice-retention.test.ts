import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { NOTICE_RETENTION_DAYS, pruneNotices } from '../src/db/notice-retention';
import { useStateFixture, type StateFixture } from './state-fixture';

// The bank's notices and the ids of applied events are kept NOTICE_RETENTION_DAYS, then deleted in
// batches; a notice not applied yet is kept whatever its age.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

const DAY_MS = 86_400_000;

async function event(receivedAt: Date): Promise<string> {
  const id = `evt-${randomUUID()}`;
  await sql`insert into provider_events (event_id, received_at) values (${id}, ${receivedAt})`.execute(f.db);
  return id;
}

async function notice(receivedAt: Date, applied: boolean): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    insert into bank_notices (provider_account_id, tenant_id, account_key, charge_id, kind, situation,
      situation_at_precision, source, verified, received_at, applied_at)
    values (${randomUUID()}, ${randomUUID()}, 'acct', ${randomUUID()}, 'paid', 'RECEBIDO', 'time', 'webhook', false,
      ${receivedAt}, ${applied ? receivedAt : null})
    returning id`.execute(f.db);
  return String(rows[0]?.id ?? '');
}

const eventsLeft = async (ids: string[]) =>
  (
    await sql<{ event_id: string }>`select event_id from provider_events where event_id = any(${ids})`.execute(f.db)
  ).rows
    .map((r) => r.event_id)
    .sort();
const noticesLeft = async (ids: string[]) =>
  (
    await sql<{ id: string }>`select id::text as id from bank_notices where id = any(${ids}::bigint[])`.execute(f.db)
  ).rows
    .map((r) => r.id)
    .sort();

it('deletes events and applied notices older than the retention, and keeps the rest', async () => {
  const now = new Date();
  const old = new Date(now.getTime() - (NOTICE_RETENTION_DAYS + 1) * DAY_MS);
  const young = new Date(now.getTime() - (NOTICE_RETENTION_DAYS - 1) * DAY_MS);
  const oldEvent = await event(old);
  const youngEvent = await event(young);
  const oldApplied = await notice(old, true);
  const oldWaiting = await notice(old, false);
  const youngApplied = await notice(young, true);

  const pruned = await pruneNotices(f.db, { now });

  expect(pruned).toEqual({ providerEvents: 1, bankNotices: 1 });
  expect(await eventsLeft([oldEvent, youngEvent])).toEqual([youngEvent]);
  expect(await noticesLeft([oldApplied, oldWaiting, youngApplied])).toEqual([oldWaiting, youngApplied].sort());
});

it('runs in batches until done, one instance at a time', async () => {
  const now = new Date();
  const old = new Date(now.getTime() - (NOTICE_RETENTION_DAYS + 10) * DAY_MS);
  await sql`insert into provider_events (event_id, received_at)
    select 'bulk-' || i, ${old}::timestamptz from generate_series(1, 12000) i`.execute(f.db);
  const runs = await Promise.all([pruneNotices(f.db, { now }), pruneNotices(f.db, { now })]);
  expect(runs.reduce((n, r) => n + r.providerEvents, 0)).toBe(12000);
  const { rows } = await sql<{
    n: string;
  }>`select count(*) as n from provider_events where event_id like 'bulk-%'`.execute(f.db);
  expect(Number(rows[0]?.n)).toBe(0);
});
