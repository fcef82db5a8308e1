import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { ensureOnlineIndexesOnce, maintainPartitions, migrateToLatest, type OnlineIndex } from '@payments/db';
import { createLogger } from '@payments/logger';
import { migrations, SCHEMA } from '../src/db/migrations';
import { HISTORY_RETENTION_DAYS_DEFAULT, partitionedTables } from '../src/db/partitioned-tables';
import type { ReceivablesDatabase } from '../src/db/schema';
import { useEmptyDatabase } from './empty-database';
import { historyQuery, receivableHistory } from '../src/domain/history';
import { chargesByState } from '../src/domain/state-counts';

// The state history partitioned by month: converted in place (its rows kept, its name and columns as
// the previous release knows them), old months dropped past the retention, a charge's history read
// from the months after its receipt only.

const DAY_MS = 86_400_000;
const logger = createLogger('receivables-test', 'silent');

let db: Kysely<ReceivablesDatabase>;
useEmptyDatabase((database) => {
  db = database;
});

/** The database as libs/db's partition maintenance takes it (any tables). */
const untyped = () => db as unknown as Kysely<unknown>;

/** The migrations the previous release (v0.28.0) ran: those before the history's conversion. */
const previousRelease = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0015'));

/** A receivable row as the previous release's intake writes it (its columns only), created at `createdAt`. */
async function insertReceivable(
  state: string,
  createdAt: Date,
): Promise<{ id: string; tenantId: string; erpId: string }> {
  const id = randomUUID();
  const tenantId = randomUUID();
  const erpId = randomUUID();
  await sql`insert into receivables (id, tenant_id, account_receivable_id, client_id, payment_slip_id, payment_method,
      url_callback, emission_date, due_date, amount_cents, discount_type, items, payer, client_name, state,
      registration_status, account_receivable_id_as_sent, client_id_as_sent, payment_slip_id_as_sent, created_at)
    values (${id}, ${tenantId}, ${erpId}, ${randomUUID()}, ${randomUUID()}, 1, 'https://erp.example.com/cb',
      '2020-01-01', '2020-02-01', 1000, 'NaoTemDesconto', '[]', '{}', 'Payer', ${state}, 'registered',
      ${erpId}, 'c', 's', ${createdAt})`.execute(db);
  return { id, tenantId, erpId };
}

/** A history entry as the previous release writes it: its columns, `at` from the database's clock unless given. */
async function insertHistory(receivableId: string, tenantId: string, to: string, at?: Date): Promise<void> {
  if (at === undefined) {
    await sql`insert into state_history (receivable_id, tenant_id, from_state, to_state, reason)
      values (${receivableId}, ${tenantId}, 'pending', ${to}, 'by the previous release')`.execute(db);
  } else {
    await sql`insert into state_history (receivable_id, tenant_id, from_state, to_state, reason, at)
      values (${receivableId}, ${tenantId}, 'pending', ${to}, 'by the previous release', ${at})`.execute(db);
  }
}

/** The partitions of the history, from the catalog, with the partition each row of a receivable is in. */
async function partitionsOf(table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${`${SCHEMA}.${table}`}::regclass order by 1`.execute(db);
  return rows.map((r) => r.name);
}

async function relationKind(name: string): Promise<string | undefined> {
  const { rows } = await sql<{ kind: string }>`
    select c.relkind as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${SCHEMA} and c.relname = ${name}`.execute(db);
  return rows[0]?.kind;
}

/** The relations a query's plan reads, from EXPLAIN (the partitions left after pruning). */
async function relationsRead(query: { sql: string; parameters: readonly unknown[] }): Promise<string[]> {
  const { rows } = await db.executeQuery(
    CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]),
  );
  return [...JSON.stringify(rows).matchAll(/"Relation Name":"([a-z0-9_]+)"/g)].map((m) => m[1]);
}

describe('the conversion of the history into monthly partitions', () => {
  it('keeps every row written before it, readable through the table of the same name', async () => {
    await migrateToLatest(db, SCHEMA, previousRelease);
    const yearsAgo = new Date(Date.now() - 3 * 365 * DAY_MS);
    const old = await insertReceivable('approved', yearsAgo);
    await insertHistory(old.id, old.tenantId, 'approved', new Date(yearsAgo.getTime() + DAY_MS));
    const recent = await insertReceivable('cancelled', new Date(Date.now() - 60_000));
    await insertHistory(recent.id, recent.tenantId, 'cancelled');
    const before = await sql<{ id: string; at: Date; to_state: string }>`
      select id, at, to_state from state_history order by id`.execute(db);

    await migrateToLatest(db, SCHEMA, migrations);

    expect(await relationKind('state_history')).toBe('p');
    const after = await sql<{ id: string; at: Date; to_state: string }>`
      select id, at, to_state from state_history order by id`.execute(db);
    expect(after.rows).toEqual(before.rows);
    const parts = await partitionsOf('state_history');
    expect(parts).toContain('state_history_legacy');
    expect(parts.length).toBeGreaterThanOrEqual(4);
    // Through the service's own read, the old charge's history as it was.
    const history = await receivableHistory(db, old.tenantId, old.erpId);
    expect(history.items.map((i) => [i.to_state, i.at])).toEqual([
      ['pending', yearsAgo.toISOString()],
      ['approved', new Date(yearsAgo.getTime() + DAY_MS).toISOString()],
    ]);
    // The counters start from the rows there before.
    expect(Object.fromEntries(await chargesByState(db))).toEqual({
      pending: 0,
      approved: 1,
      rejected: 0,
      cancelled: 1,
    });
  });

  it("takes the previous release's writes and reads: its columns only, its id sequence, its online index", async () => {
    await migrateToLatest(db, SCHEMA, previousRelease);
    const r = await insertReceivable('pending', new Date());
    await insertHistory(r.id, r.tenantId, 'pending');
    await migrateToLatest(db, SCHEMA, migrations);

    const next = await insertReceivable('pending', new Date());
    await insertHistory(next.id, next.tenantId, 'rejected');
    const { rows } = await sql<{ id: string; partition: string }>`
      select id, tableoid::regclass::text as partition from state_history order by id`.execute(db);
    expect(rows).toHaveLength(2);
    // Ids go on from the old table's sequence, and the new entry is in this month's partition.
    expect(BigInt(rows[1].id)).toBeGreaterThan(BigInt(rows[0].id));
    expect(rows[0].partition).toMatch(/(^|\.)state_history_legacy$/);
    expect(rows[1].partition).toMatch(/(^|\.)state_history_p\d{6}$/);
    // Its history read (no time bound) and its state count as it had them.
    const read = await sql<{ to_state: string }>`
      select to_state from state_history where receivable_id = ${next.id} order by at, id`.execute(db);
    expect(read.rows).toEqual([{ to_state: 'rejected' }]);
    // The previous release checks its online index by name at start: there and valid, nothing to build.
    const previousOnlineIndexes: OnlineIndex[] = [
      {
        name: 'state_history_rejected_at_idx',
        table: 'state_history',
        sql: `create index concurrently if not exists state_history_rejected_at_idx on state_history (at)
          where to_state = 'rejected'`,
      },
    ];
    expect(await ensureOnlineIndexesOnce(db, SCHEMA, previousOnlineIndexes, logger)).toEqual({
      status: 'done',
      built: [],
    });
    // Its payment dedupe still finds its unique key.
    await sql`insert into provider_events (event_id) values ('evt-1') on conflict (event_id) do nothing`.execute(db);
    await sql`insert into provider_events (event_id) values ('evt-1') on conflict (event_id) do nothing`.execute(db);
    const events = await sql<{ n: string }>`select count(*) as n from provider_events`.execute(db);
    expect(Number(events.rows[0]?.n)).toBe(1);
  });

  it('leaves the sequence to the partitioned table: dropping the old rows keeps the ids going', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    await sql`drop table state_history_legacy`.execute(db);
    const r = await insertReceivable('pending', new Date());
    await insertHistory(r.id, r.tenantId, 'rejected');
    const { rows } = await sql<{ n: string }>`select count(*) as n from state_history`.execute(db);
    expect(Number(rows[0]?.n)).toBe(1);
  });
});

describe('retention', () => {
  it('drops a month of history once it is wholly older than the retention, with its rows', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    const r = await insertReceivable('approved', new Date('2019-01-01T00:00:00Z'));
    await insertHistory(r.id, r.tenantId, 'approved', new Date('2019-01-02T00:00:00Z'));
    await insertHistory(r.id, r.tenantId, 'approved');
    const tables = partitionedTables({ historyRetentionDays: HISTORY_RETENTION_DAYS_DEFAULT });
    // Today's maintenance drops nothing: the oldest row is 7 years old, but its partition holds rows of today.
    expect((await maintainPartitions(untyped(), SCHEMA, tables)).dropped).toEqual([]);
    // Five years and 40 days on, this month and everything before it are past the retention.
    const later = new Date(Date.now() + (HISTORY_RETENTION_DAYS_DEFAULT + 40) * DAY_MS);
    const { dropped } = await maintainPartitions(untyped(), SCHEMA, tables, later);
    expect(dropped).toContain(`${SCHEMA}.state_history_legacy`);
    await insertHistory(r.id, r.tenantId, 'approved', later);
    const { rows } = await sql<{ at: Date }>`select at from state_history where receivable_id = ${r.id}`.execute(db);
    expect(rows.map((x) => x.at.toISOString())).toEqual([later.toISOString()]);
    expect(await partitionsOf('state_history')).not.toContain('state_history_legacy');
  });
});

describe("a charge's history query", () => {
  it('reads only the partitions from its receipt on', async () => {
    await migrateToLatest(db, SCHEMA, migrations);
    // Months ahead exist: a charge received in the last of them is read from there only.
    const ahead = new Date(Date.now() + 200 * DAY_MS);
    await maintainPartitions(untyped(), SCHEMA, partitionedTables({ historyRetentionDays: 10_000 }), ahead);
    const parts = await partitionsOf('state_history');
    const last = parts
      .filter((p) => /_p\d{6}$/.test(p))
      .sort()
      .at(-1);
    const lastStart = new Date(`${last?.slice(-6, -2)}-${last?.slice(-2)}-15T00:00:00Z`);
    const read = await relationsRead(historyQuery(db, { id: randomUUID(), created_at: lastStart }).compile());
    expect(read).toEqual([last]);
    // The old rows' partition is read only for charges received before the conversion.
    expect(read).not.toContain('state_history_legacy');
    const all = await relationsRead(historyQuery(db, { id: randomUUID(), created_at: new Date(0) }).compile());
    expect(all).toContain('state_history_legacy');
  });
});
