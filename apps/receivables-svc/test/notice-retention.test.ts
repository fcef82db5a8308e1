import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { NOTICE_RETENTION_DAYS, pruneNotices } from '../src/db/notice-retention';
import { useStateFixture, type StateFixture } from './state-fixture';

// The ids of applied events and reconciliation's dedup keys are kept NOTICE_RETENTION_DAYS, then
// deleted in batches (the notices themselves go with their log's months: notice-log.test.ts).

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

async function key(receivedAt: Date): Promise<string> {
  const dedupKey = `${randomUUID()}:paid`;
  await sql`insert into bank_notice_keys (tenant_id, account_key, dedup_key, received_at)
    values (${randomUUID()}, 'acct', ${dedupKey}, ${receivedAt})`.execute(f.db);
  return dedupKey;
}

const eventsLeft = async (ids: string[]) =>
  (
    await sql<{ event_id: string }>`select event_id from provider_events where event_id = any(${ids})`.execute(f.db)
  ).rows
    .map((r) => r.event_id)
    .sort();
const keysLeft = async (keys: string[]) =>
  (
    await sql<{ dedup_key: string }>`select dedup_key from bank_notice_keys where dedup_key = any(${keys})`.execute(
      f.db,
    )
  ).rows
    .map((r) => r.dedup_key)
    .sort();

it('deletes events and notice keys older than the retention, and keeps the rest', async () => {
  const now = new Date();
  const old = new Date(now.getTime() - (NOTICE_RETENTION_DAYS + 1) * DAY_MS);
  const young = new Date(now.getTime() - (NOTICE_RETENTION_DAYS - 1) * DAY_MS);
  const oldEvent = await event(old);
  const youngEvent = await event(young);
  const oldKey = await key(old);
  const youngKey = await key(young);

  const pruned = await pruneNotices(f.db, { now });

  expect(pruned).toEqual({ providerEvents: 1, noticeKeys: 1 });
  expect(await eventsLeft([oldEvent, youngEvent])).toEqual([youngEvent]);
  expect(await keysLeft([oldKey, youngKey])).toEqual([youngKey]);
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
