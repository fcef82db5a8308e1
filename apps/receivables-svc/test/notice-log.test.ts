import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ensureOnlineIndexesOnce, maintainPartitions, migrateToLatest } from '@payments/db';
import { migrations, onlineIndexes, SCHEMA } from '../src/db/migrations';
import { NOTICE_RETENTION_DAYS, pruneNotices } from '../src/db/notice-retention';
import { HISTORY_RETENTION_DAYS_DEFAULT, partitionedTables } from '../src/db/partitioned-tables';
import type { ReceivablesDatabase } from '../src/db/schema';
import { useEmptyDatabase } from './empty-database';

// The bank's notices as a queue apart from their log (migration 0019): converted in place with the
// previous release still writing, applied notices leaving the queue for the log, reconciliation's
// findings stored once however often they are found, and the log's months dropped past the retention.

const DAY_MS = 86_400_000;

let db: Kysely<ReceivablesDatabase>;
useEmptyDatabase((database) => {
  db = database;
});

/** The migrations the previous release (v0.30.0) ran: those before the split. */
const previousRelease = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0019'));

const tenantId = randomUUID();
const accountKey = 'inter:12345';

/**
 * Stores a notice as the previous release's storeNotices does: its columns, and `on conflict` on the
 * dedup key. Returns the id stored, or undefined when nothing was.
 */
async function store(chargeId: string, dedupKey: string | null, receivedAt?: Date): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    insert into bank_notices (provider_account_id, tenant_id, account_key, charge_id, kind, situation, situation_at,
      situation_at_precision, amount_received_cents, payment_method, source, verified, refund_id, dedup_key, received_at)
    values (${randomUUID()}, ${tenantId}, ${accountKey}, ${chargeId}, 'paid', 'RECEBIDO', null, 'date', 1000, 'boleto',
      ${dedupKey === null ? 'webhook' : 'list'}, ${dedupKey !== null}, null, ${dedupKey}, ${receivedAt ?? sql`now()`})
    on conflict (tenant_id, account_key, dedup_key) where dedup_key is not null do nothing
    returning id::text as id`.execute(db);
  return rows[0]?.id;
}

/** Marks a notice applied as the previous release's worker does: one update of the queue's row. */
async function apply(id: string, outcome: string): Promise<void> {
  await sql`update bank_notices set attempts = attempts + 1, outcome = ${outcome}, last_error = null, applied_at = now()
    where id = ${id}`.execute(db);
}

async function ids(table: 'bank_notices' | 'bank_notice_log'): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id::text as id from ${sql.table(table)} order by id`.execute(db);
  return rows.map((r) => r.id);
}

async function logRow(id: string): Promise<{ partition: string; outcome: string | null; applied: boolean }> {
  const { rows } = await sql<{ partition: string; outcome: string | null; applied: boolean }>`
    select tableoid::regclass::text as partition, outcome, applied_at is not null as applied
    from bank_notice_log where id = ${id}`.execute(db);
  const row = rows[0];
  if (row === undefined) throw new Error(`notice ${id} is not in the log`);
  return row;
}

async function partitionsOf(table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${`${SCHEMA}.${table}`}::regclass order by 1`.execute(db);
  return rows.map((r) => r.name);
}

describe('the conversion', () => {
  it('keeps every notice in the log and queues again only those not applied', async () => {
    await migrateToLatest(db, SCHEMA, previousRelease);
    const applied = await store('charge-1', 'charge-1:paid', new Date(Date.now() - 30 * DAY_MS));
    const waiting = await store('charge-2', 'charge-2:paid');
    const webhook = await store('charge-3', null);
    if (applied === undefined || waiting === undefined || webhook === undefined) throw new Error('not stored');
    await apply(applied, 'approved');

    await migrateToLatest(db, SCHEMA, migrations);

    expect(await ids('bank_notice_log')).toEqual([applied, waiting, webhook]);
    expect(await ids('bank_notices')).toEqual([waiting, webhook]);
    expect(await logRow(applied)).toEqual({
      partition: expect.stringMatching(/(^|\.)bank_notices_legacy$/),
      outcome: 'approved',
      applied: true,
    });
    const parts = await partitionsOf('bank_notice_log');
    expect(parts).toContain('bank_notices_legacy');
    expect(parts.filter((p) => /^bank_notice_log_p\d{6}$/.test(p)).length).toBeGreaterThanOrEqual(3);
  });

  it("builds no index on the old rows under its lock: the log's index on ids is completed online", async () => {
    await migrateToLatest(db, SCHEMA, previousRelease);
    const old = await store('charge-1', null);
    await migrateToLatest(db, SCHEMA, migrations);

    // The old partition keeps the indexes it had (its primary key serves the lookups by id); the
    // months made by the conversion have theirs.
    const byId = async () => {
      const { rows } = await sql<{ table: string; index: string; valid: boolean }>`
        select t.relname as table, c.relname as index, i.indisvalid as valid from pg_index i
        join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
        join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${SCHEMA} and (t.relname like 'bank_notice_log%' or t.relname = 'bank_notices_legacy')
          and not i.indisunique and pg_get_indexdef(i.indexrelid) like '%(id)'
        order by 1`.execute(db);
      return rows;
    };
    const before = await byId();
    expect(before.find((r) => r.table === 'bank_notices_legacy')).toBeUndefined();
    expect(before.find((r) => r.table === 'bank_notice_log')).toEqual({
      table: 'bank_notice_log',
      index: 'bank_notice_log_id_idx',
      valid: false,
    });
    const months = before.filter((r) => /^bank_notice_log_p\d{6}$/.test(r.table));
    expect(months.length).toBeGreaterThanOrEqual(3);

    const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const outcome = await ensureOnlineIndexesOnce(db, SCHEMA, onlineIndexes, silent);
    expect(outcome).toMatchObject({ status: 'done', built: expect.arrayContaining(['bank_notices_legacy_id_idx']) });
    const after = await byId();
    expect(after.find((r) => r.table === 'bank_notices_legacy')).toEqual({
      table: 'bank_notices_legacy',
      index: 'bank_notices_legacy_id_idx',
      valid: true,
    });
    expect(after.find((r) => r.table === 'bank_notice_log')?.valid).toBe(true);

    // The old notice's outcome is mirrored before and after alike.
    if (old === undefined) throw new Error('not stored');
    await apply(old, 'approved');
    expect(await logRow(old)).toMatchObject({ outcome: 'approved', applied: true });
  });

  it("takes the previous release's writes: each finding stored once, applied notices leaving the queue", async () => {
    await migrateToLatest(db, SCHEMA, previousRelease);
    const old = await store('charge-1', 'charge-1:paid');
    if (old === undefined) throw new Error('not stored');
    await apply(old, 'approved');
    await migrateToLatest(db, SCHEMA, migrations);

    // Found again by a sweep: already stored before the split, so nothing is.
    expect(await store('charge-1', 'charge-1:paid')).toBeUndefined();
    const found = await store('charge-2', 'charge-2:paid');
    if (found === undefined) throw new Error('not stored');
    expect(BigInt(found)).toBeGreaterThan(BigInt(old));
    expect(await store('charge-2', 'charge-2:paid')).toBeUndefined();
    expect(await ids('bank_notices')).toEqual([found]);

    await apply(found, 'approved');
    expect(await ids('bank_notices')).toEqual([]);
    expect(await logRow(found)).toEqual({
      partition: expect.stringMatching(/(^|\.)bank_notice_log_p\d{6}$/),
      outcome: 'approved',
      applied: true,
    });
    // Applied and gone from the queue, it is still known: the next sweep's finding stores nothing.
    expect(await store('charge-2', 'charge-2:paid')).toBeUndefined();
    // A webhook's notice is stored as often as it comes.
    expect(await store('charge-2', null)).toBeDefined();
    expect(await store('charge-2', null)).toBeDefined();
    expect(await ids('bank_notice_log')).toHaveLength(4);
  });

  it('mirrors each try into the log while the notice waits', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    const id = await store('charge-1', null);
    if (id === undefined) throw new Error('not stored');
    await sql`update bank_notices set attempts = attempts + 1, outcome = 'unknown_charge',
      next_attempt_at = now() + interval '1 minute' where id = ${id}`.execute(db);
    expect(await ids('bank_notices')).toEqual([id]);
    expect(await logRow(id)).toMatchObject({ outcome: 'unknown_charge', applied: false });
  });

  it('stores one of two concurrent stores of one finding', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    const stored = await Promise.all([1, 2, 3, 4].map(() => store('charge-1', 'charge-1:paid')));
    expect(stored.filter((id) => id !== undefined)).toHaveLength(1);
    expect(await ids('bank_notice_log')).toHaveLength(1);
  });

  it('leaves the id sequence to the queue: dropping the old rows keeps the ids going', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    await sql`drop table bank_notices_legacy`.execute(db);
    expect(await store('charge-1', null)).toBeDefined();
  });
});

describe('retention', () => {
  it("drops the log's months past the retention and forgets their findings' keys, keeping what waits", async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    const applied = await store('charge-1', 'charge-1:paid');
    const waiting = await store('charge-2', 'charge-2:paid');
    if (applied === undefined || waiting === undefined) throw new Error('not stored');
    await apply(applied, 'approved');
    const tables = partitionedTables({ historyRetentionDays: HISTORY_RETENTION_DAYS_DEFAULT });

    // Today's maintenance and pruning drop and delete nothing.
    expect((await maintainPartitions(db as unknown as Kysely<unknown>, SCHEMA, tables)).dropped).toEqual([]);
    expect(await pruneNotices(db)).toEqual({ providerEvents: 0, noticeKeys: 0 });

    const later = new Date(Date.now() + (NOTICE_RETENTION_DAYS + 40) * DAY_MS);
    const { dropped } = await maintainPartitions(db as unknown as Kysely<unknown>, SCHEMA, tables, later);
    expect(dropped).toEqual(
      expect.arrayContaining([
        `${SCHEMA}.bank_notices_legacy`,
        expect.stringMatching(new RegExp(`^${SCHEMA}\\.bank_notice_log_p\\d{6}$`)),
      ]),
    );
    expect(await ids('bank_notice_log')).toEqual([]);
    expect(await pruneNotices(db, { now: later })).toEqual({ providerEvents: 0, noticeKeys: 2 });
    // The notice not applied yet is still owed, in the queue.
    expect(await ids('bank_notices')).toEqual([waiting]);
    // The applied finding's key is forgotten with its month: found again, it is stored again.
    const again = await store('charge-1', 'charge-1:paid', later);
    expect(again).toBeDefined();
  });
});
