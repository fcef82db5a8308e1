import { assertIdentifier, createPartitionsAhead, type OnlineIndex } from '@payments/db';
import { sql, type Kysely, type Migration } from 'kysely';
import { outboxMigration, outboxRetryMigration, outboxTraceContextMigration } from '@payments/outbox';
import { STATE_HISTORY } from './partitioned-tables';
import { searchFilterIndexes, searchFiltersMigration } from './search-filters-migration';

export const SCHEMA = 'receivables';

export const migrations: Record<string, Migration> = {
  '0001_receivables': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('receivables')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('account_receivable_id', 'uuid', (c) => c.notNull())
        .addColumn('client_id', 'uuid', (c) => c.notNull())
        .addColumn('payment_slip_id', 'uuid', (c) => c.notNull())
        .addColumn('payment_method', 'smallint', (c) => c.notNull().check(sql`payment_method in (1, 3)`))
        .addColumn('url_callback', 'text', (c) => c.notNull())
        .addColumn('emission_date', 'date', (c) => c.notNull())
        .addColumn('due_date', 'date', (c) => c.notNull())
        .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
        .addColumn('discount_type', 'text', (c) => c.notNull())
        .addColumn('discount_cents', 'bigint')
        .addColumn('discount_until', 'date')
        .addColumn('fine_bp', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('interest_cents_per_day', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('items', 'jsonb', (c) => c.notNull())
        .addColumn('payer', 'jsonb', (c) => c.notNull())
        .addColumn('client_name', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) =>
          c.notNull().check(sql`state in ('pending', 'approved', 'rejected', 'cancelled')`),
        )
        .addColumn('registration_status', 'text', (c) => c.notNull())
        .addColumn('provider_charge_id', 'text')
        .addColumn('our_number', 'text')
        .addColumn('barcode', 'text')
        .addColumn('typeable_line', 'text')
        .addColumn('pix_copy_and_paste', 'text')
        .addColumn('qrcode_image_url', 'text')
        .addColumn('pdf_url', 'text')
        .addColumn('rejection_code', 'text')
        .addColumn('rejection_message', 'text')
        .addColumn('payment_date', 'timestamptz')
        .addColumn('amount_paid_cents', 'bigint')
        .addColumn('fee_cents', 'bigint')
        .addColumn('payment_type', 'text', (c) => c.notNull().defaultTo('undefined'))
        .addColumn('cancel_requested_at', 'timestamptz')
        .addColumn('cancellation_requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addUniqueConstraint('receivables_tenant_erp_id_uq', ['tenant_id', 'account_receivable_id'])
        .execute();
      // Search: by tenant and emission date (and state), paged on (emission_date, account_receivable_id).
      await db.schema
        .createIndex('receivables_search_idx')
        .on('receivables')
        .columns(['tenant_id', 'emission_date', 'account_receivable_id'])
        .execute();
      await db.schema
        .createIndex('receivables_search_state_idx')
        .on('receivables')
        .columns(['tenant_id', 'state', 'emission_date', 'account_receivable_id'])
        .execute();
      // Booklets: every installment of a payment slip id.
      await db.schema
        .createIndex('receivables_slip_idx')
        .on('receivables')
        .columns(['tenant_id', 'payment_slip_id', 'due_date'])
        .execute();
      await sql`create unique index receivables_provider_charge_uq on receivables (provider_charge_id) where provider_charge_id is not null`.execute(
        db,
      );
      await db.schema
        .createTable('state_history')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('receivable_id', 'uuid', (c) => c.notNull().references('receivables.id'))
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('from_state', 'text')
        .addColumn('to_state', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema
        .createIndex('state_history_receivable_idx')
        .on('state_history')
        .columns(['receivable_id', 'at'])
        .execute();
      await db.schema
        .createTable('provider_events')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0002_outbox': outboxMigration,
  '0003_outbox_trace_context': outboxTraceContextMigration,
  '0004_provider_accounts': {
    async up(db: Kysely<unknown>) {
      // Each tenant's provider account, one immutable version per row (id = ProviderAccountVersion.account_id).
      await db.schema
        .createTable('provider_accounts')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('sandbox', 'inter')`))
        .addColumn('account_key', 'text', (c) => c.notNull())
        .addColumn('beneficiary', 'jsonb', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('sealed_credentials', 'text')
        .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      // Null: accepted before accounts existed (registered with the bank sandbox and its own default payee).
      await db.schema
        .alterTable('receivables')
        .addColumn('provider_account_id', 'uuid', (c) => c.references('provider_accounts.id'))
        .execute();
      // A real bank's charge ids and our_numbers are unique per account only; legacy rows stay unique on their own.
      await sql`drop index receivables_provider_charge_uq`.execute(db);
      await sql`create unique index receivables_account_charge_uq on receivables (provider_account_id, provider_charge_id)
        where provider_charge_id is not null and provider_account_id is not null`.execute(db);
      await sql`create unique index receivables_legacy_charge_uq on receivables (provider_charge_id)
        where provider_charge_id is not null and provider_account_id is null`.execute(db);
      await sql`create index receivables_account_our_number_idx on receivables (provider_account_id, our_number)
        where our_number is not null`.execute(db);
      // Which account a provider event was about (null: a legacy sandbox charge), for tracing a payment back.
      await db.schema.alterTable('provider_events').addColumn('provider_account_id', 'uuid').execute();
    },
  },
  '0005_payments_needing_refund': {
    async up(db: Kysely<unknown>) {
      // Money the provider took for a charge it had cancelled or rejected: the charge keeps its state,
      // the payment is kept here for an operator's refund decision.
      await db.schema
        .createTable('payments_needing_refund')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('receivable_id', 'uuid', (c) => c.notNull().references('receivables.id'))
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('provider_account_id', 'uuid')
        .addColumn('provider_charge_id', 'text', (c) => c.notNull())
        .addColumn('charge_state', 'text', (c) => c.notNull().check(sql`charge_state in ('cancelled', 'rejected')`))
        .addColumn('paid_at', 'timestamptz', (c) => c.notNull())
        .addColumn('amount_paid_cents', 'bigint', (c) => c.notNull())
        .addColumn('fee_cents', 'bigint', (c) => c.notNull())
        .addColumn('payment_type', 'text', (c) => c.notNull())
        .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema
        .createIndex('payments_needing_refund_tenant_idx')
        .on('payments_needing_refund')
        .columns(['tenant_id', 'recorded_at'])
        .execute();
    },
  },
  '0006_outbox_retry': outboxRetryMigration,
  '0007_erp_ids_as_sent': {
    async up(db: Kysely<unknown>) {
      // The uuid keys match any spelling; these are the ERP's ids exactly as it sent them at creation,
      // returned in answers and callbacks. Rows from before keep their stored (lower-case) spelling.
      await sql`alter table receivables
        add column account_receivable_id_as_sent text,
        add column client_id_as_sent text,
        add column payment_slip_id_as_sent text`.execute(db);
      await sql`update receivables set account_receivable_id_as_sent = account_receivable_id::text,
        client_id_as_sent = client_id::text, payment_slip_id_as_sent = payment_slip_id::text`.execute(db);
      await sql`alter table receivables
        alter column account_receivable_id_as_sent set not null,
        alter column client_id_as_sent set not null,
        alter column payment_slip_id_as_sent set not null`.execute(db);
    },
  },
  '0008_registration_stats': {
    async up(db: Kysely<unknown>) {
      // When the provider registered a charge: what the registration statistics count. Rows registered
      // before this migration stay null (the statistics start with it; they look back 8 days at most).
      await sql`alter table receivables add column registered_at timestamptz`.execute(db);
      // The statistics' indexes on receivables and state_history are built concurrently after the
      // migrations (onlineIndexes below): a build in this transaction would hold charge intake and
      // every state change for its whole length.
      // Per tenant and minute, re-aggregated from those rows by the rollup (domain/registration-stats.ts).
      await sql`create table registrations_per_minute (
        minute timestamptz not null,
        tenant_id uuid not null,
        registered integer not null,
        failed integer not null,
        constraint registrations_per_minute_pk primary key (minute, tenant_id)
      )`.execute(db);
    },
  },
  '0009_registration_marks': {
    async up(db: Kysely<unknown>) {
      // Written and committed before the first create of a charge is sent: a receivable with a
      // mark may have a charge at the bank, so every later attempt looks it up (Inter: by seuNumero, the
      // bank_reference) before it creates anything, whatever process or message copy makes that attempt.
      await sql`create table registration_marks (
        receivable_id uuid primary key references receivables (id),
        provider_account_id uuid,
        bank_reference text not null,
        marked_at timestamptz not null default now()
      )`.execute(db);
    },
  },
  '0010_bank_call_budgets': {
    async up(db: Kysely<unknown>) {
      // The bank's per-minute limits shared by every instance: a token bucket per bank account and endpoint,
      // and until when the bank said to wait (a 429's Retry-After, a 403's growing delay).
      await sql`create table call_budgets (
        bucket text not null,
        endpoint text not null,
        tokens double precision not null,
        refreshed_at timestamptz not null,
        blocked_until timestamptz not null default '-infinity',
        constraint call_budgets_pk primary key (bucket, endpoint)
      )`.execute(db);
      // One OAuth token per bank account for every instance, sealed like the credentials it was got with;
      // refreshing_until: the lease of the one instance asking the bank for a new one.
      await sql`create table bank_tokens (
        bank_account text primary key,
        sealed_token text,
        token_digest text,
        usable_until timestamptz,
        refreshing_until timestamptz
      )`.execute(db);
    },
  },
  '0011_bank_notices_and_reconciliation': {
    async up(db: Kysely<unknown>) {
      // Every bank notice is stored before it is answered, then applied by a worker: a notice
      // for a charge not known yet, or one the bank does not confirm yet, waits here for its next attempt.
      // Reconciliation stores what it finds here too, once per bank account, charge and kind (dedup_key).
      await sql`create table bank_notices (
        id bigserial primary key,
        provider_account_id uuid not null,
        tenant_id uuid not null,
        account_key text not null,
        charge_id text not null,
        kind text not null check (kind in ('paid', 'cancelled', 'other')),
        situation text not null,
        situation_at timestamptz,
        situation_at_precision text not null check (situation_at_precision in ('time', 'date')),
        amount_received_cents bigint,
        payment_method text,
        source text not null check (source in ('webhook', 'list', 'history', 'cancel')),
        verified boolean not null,
        dedup_key text,
        received_at timestamptz not null default now(),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        applied_at timestamptz,
        outcome text,
        last_error text
      )`.execute(db);
      await sql`create index bank_notices_due_idx on bank_notices (next_attempt_at) where applied_at is null`.execute(
        db,
      );
      await sql`create unique index bank_notices_dedup_idx on bank_notices (tenant_id, account_key, dedup_key)
        where dedup_key is not null`.execute(db);
      // One row per bank account swept: the lease (one instance sweeps it at a time) and how far it got.
      await sql`create table reconciliation_accounts (
        tenant_id uuid not null,
        account_key text not null,
        holder text,
        leased_until timestamptz not null default '-infinity',
        last_complete_at timestamptz,
        callbacks_until timestamptz,
        constraint reconciliation_accounts_pk primary key (tenant_id, account_key)
      )`.execute(db);
    },
  },
  '0012_registration_waits': {
    async up(db: Kysely<unknown>) {
      // Attempts the bank did not take, on the charge itself (a charge stuck on an unreachable bank
      // is visible): how many, the bank's last answer and when. Nullable or defaulted: no table rewrite.
      await sql`alter table receivables
        add column registration_attempts integer not null default 0,
        add column registration_last_error text,
        add column registration_last_attempt_at timestamptz`.execute(db);
    },
  },
  '0013_bank_notice_refunds': {
    async up(db: Kysely<unknown>) {
      // A refund made at the bank (a PIX devolução) is stored as a notice of its own kind, with the
      // bank's id of the refund: it is written in the charge's history once per refund id. The wider
      // check is NOT VALID: every row already meets the narrower one, so nothing is read under the lock.
      // A nullable column: no table rewrite.
      await sql`alter table bank_notices
        drop constraint bank_notices_kind_check,
        add constraint bank_notices_kind_check check (kind in ('paid', 'cancelled', 'other', 'refunded')) not valid,
        add column refund_id text`.execute(db);
    },
  },
  '0014_pix_provider_accounts': {
    async up(db: Kysely<unknown>) {
      // `pix` accounts: any bank that speaks the Central Bank's PIX API. The wider check is NOT VALID:
      // every stored version meets the narrower one, so the table is not read under the lock.
      await sql`alter table provider_accounts
        drop constraint provider_accounts_provider_check,
        add constraint provider_accounts_provider_check check (provider in ('sandbox', 'inter', 'pix')) not valid`.execute(
        db,
      );
    },
  },
  '0015_state_history_by_month': {
    async up(db: Kysely<unknown>) {
      // The history becomes a table partitioned by month on `at`, under its old name and with its old
      // columns and defaults, so the previous release reads and writes it unchanged. Its rows stay where
      // they are: the old table is attached as the partition of everything before now, and is dropped
      // whole once its newest row is past the retention. The rename waits for writers of the history and
      // holds them until the commit (a lock timeout fails the migration, to be run again).
      await sql`lock table state_history in access exclusive mode`.execute(db);
      await sql`alter table state_history rename to state_history_legacy`.execute(db);
      await sql`alter index state_history_pkey rename to state_history_legacy_pkey`.execute(db);
      await sql`alter index state_history_receivable_idx rename to state_history_legacy_receivable_idx`.execute(db);
      // The previous release looks this index up by name and builds it concurrently when missing, which
      // a partitioned table refuses: it stays a plain index of that name, on the old rows.
      await sql`create index if not exists state_history_rejected_at_idx on state_history_legacy (at)
        where to_state = 'rejected'`.execute(db);
      // No primary key: a unique index would have to hold `at` too, and attaching the old rows would
      // build it under the lock; ids come from the same sequence and only order entries of one instant.
      // No foreign key to receivables either: a history entry is written beside its charge's change.
      await sql`create table state_history (
        id bigint not null default nextval('state_history_id_seq'),
        receivable_id uuid not null,
        tenant_id uuid not null,
        from_state text,
        to_state text not null,
        reason text not null,
        at timestamptz not null default now()
      ) partition by range (at)`.execute(db);
      // Owned by the old table, the sequence would go when its partition is dropped.
      await sql`alter sequence state_history_id_seq owned by state_history.id`.execute(db);
      // Created on the parent before the old rows are attached: the old table's indexes of the same
      // shape become its partitions' (nothing is built), new partitions get their own.
      await sql`create index state_history_receivable_idx on state_history (receivable_id, at)`.execute(db);
      await sql`create index state_history_rejected_idx on state_history (at) where to_state = 'rejected'`.execute(db);
      await sql`alter table state_history attach partition state_history_legacy
        for values from (minvalue) to (${sql.lit((await conversionBound(db)).toISOString())})`.execute(db);
      await createPartitionsAhead(db, SCHEMA, STATE_HISTORY);
    },
  },
  '0016_state_counts': {
    async up(db: Kysely<unknown>) {
      // Charges by state for the metrics, kept as states change: a scrape reads a handful of rows here,
      // never the receivables. Every change appends a row of +n / -n to state_count_changes (no row is
      // updated by two writers, so no hot row and no lock order between transactions), and a periodic
      // fold moves them into state_counts (domain/state-counts.ts). Triggers keep them, not the code:
      // the previous release, still writing during a rolling upgrade, is counted exactly too.
      await sql`create table state_counts (state text primary key, count bigint not null)`.execute(db);
      await sql`create table state_count_changes (state text not null, delta bigint not null)`.execute(db);
      assertIdentifier(SCHEMA);
      const changes = sql.raw(`${SCHEMA}.state_count_changes`);
      await sql`create function count_inserted_receivables() returns trigger language plpgsql as $$
        begin
          insert into ${changes} (state, delta) select state, count(*) from inserted group by state;
          return null;
        end $$`.execute(db);
      await sql`create function count_receivable_state_change() returns trigger language plpgsql as $$
        begin
          if tg_op = 'UPDATE' then
            insert into ${changes} (state, delta) values (old.state, -1), (new.state, 1);
          else
            insert into ${changes} (state, delta) values (old.state, -1);
          end if;
          return null;
        end $$`.execute(db);
      await sql`create function count_truncated_receivables() returns trigger language plpgsql as $$
        begin
          delete from ${changes};
          delete from ${sql.raw(`${SCHEMA}.state_counts`)};
          return null;
        end $$`.execute(db);
      // One insert per statement (intake stores a batch in one), one per row that changes state.
      await sql`create trigger receivables_count_insert after insert on receivables
        referencing new table as inserted for each statement execute function count_inserted_receivables()`.execute(db);
      await sql`create trigger receivables_count_update after update of state on receivables
        for each row when (old.state is distinct from new.state) execute function count_receivable_state_change()`.execute(
        db,
      );
      await sql`create trigger receivables_count_delete after delete on receivables
        for each row execute function count_receivable_state_change()`.execute(db);
      await sql`create trigger receivables_count_truncate after truncate on receivables
        for each statement execute function count_truncated_receivables()`.execute(db);
      // Counted once, here: the triggers above lock out writers of receivables until the commit, so
      // no change falls between this count and the first one they record.
      await sql`insert into state_counts (state, count) select state, count(*) from receivables group by state`.execute(
        db,
      );
    },
  },
  '0017_autovacuum_per_table': {
    async up(db: Kysely<unknown>) {
      // Storage settings take a lock that lets reads and writes go on, and rewrite nothing.
      // receivables: every state change, registration and attempt updates a row; vacuumed after 2 % of
      // it changed rather than 20 % (at tens of millions of rows, 20 % is weeks of dead rows), and room
      // left in each page for an update to stay on it.
      await sql`alter table receivables set (autovacuum_vacuum_scale_factor = 0.02,
        autovacuum_analyze_scale_factor = 0.02, fillfactor = 90)`.execute(db);
      // bank_notices: a queue as well as a record (each notice is updated when applied).
      await sql`alter table bank_notices set (autovacuum_vacuum_scale_factor = 0.02,
        autovacuum_analyze_scale_factor = 0.02)`.execute(db);
      // provider_events: inserted only; vacuumed after 2 % new rows so they are frozen and all-visible
      // early (the dedupe lookups stay index-only) rather than in one long vacuum much later.
      await sql`alter table provider_events set (autovacuum_vacuum_insert_scale_factor = 0.02)`.execute(db);
      // The counters' change rows are appended and deleted by the fold every few seconds; the counts
      // themselves are a few rows updated as often: vacuumed by row count, not by share of the table.
      await sql`alter table state_count_changes set (autovacuum_vacuum_scale_factor = 0,
        autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
        autovacuum_vacuum_insert_threshold = 10000)`.execute(db);
      await sql`alter table state_counts set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000)`.execute(
        db,
      );
      // The history's partitions are insert-only; Postgres's default insert-triggered vacuum (after
      // 20 % new rows) suits them, and a partitioned table takes no such settings of its own.
    },
  },
  // The search's payer name, tax id, our_number and amount filters (docs/api.md, "Search").
  '0018_search_filters': searchFiltersMigration,
};

/**
 * Where the old history rows' partition ends: after every row committed before the lock (the
 * database's clock now, or a later time some writer's clock put on a row), so the attach finds
 * all of them inside it. The newest rows by id are read through the key, not the whole table.
 */
async function conversionBound(db: Kysely<unknown>): Promise<Date> {
  const { rows } = await sql<{ bound: Date }>`
    select greatest(clock_timestamp(), (select max(at) from (select at from state_history_legacy order by id desc limit 10000) newest))
      + interval '1 millisecond' as bound`.execute(db);
  const bound = rows[0]?.bound;
  if (!bound) throw new Error('no clock reading for the history conversion');
  return bound;
}

/**
 * Indexes on the large tables, built with CREATE INDEX CONCURRENTLY in the background after the
 * migrations (libs/db ensureOnlineIndexes): writes go on during the build, and the queries they serve
 * work without them (slower) until they are there. Indexes of new, empty tables stay in migrations.
 */
export const onlineIndexes: OnlineIndex[] = [
  // Charges waiting for their bank, by account and age (domain/registration-waits.ts): the metric and the
  // health page read only these rows, never the whole table.
  {
    name: 'receivables_queued_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_queued_idx on receivables
      (provider_account_id, created_at) where registration_status = 'queued'`,
  },
  // Charges registered in the last minutes, for the registration statistics (receivables.registered_at, 0008).
  {
    name: 'receivables_registered_at_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_registered_at_idx on receivables (registered_at)
      where registered_at is not null`,
  },
  // Registrations that failed for good (state_history to rejected) have their index made with the
  // partitioned history by migration 0015: a partitioned table takes no concurrent build.
  // Open charges by account and due date: which bank accounts reconciliation sweeps, and their due-date span.
  {
    name: 'receivables_open_by_account_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_open_by_account_idx on receivables
      (provider_account_id, due_date) where state = 'pending'`,
  },
  // What the retention of the bank's notices deletes (db/notice-retention.ts), found without a scan.
  {
    name: 'provider_events_received_at_idx',
    table: 'provider_events',
    sql: `create index concurrently if not exists provider_events_received_at_idx on provider_events (received_at)`,
  },
  {
    name: 'bank_notices_applied_received_at_idx',
    table: 'bank_notices',
    sql: `create index concurrently if not exists bank_notices_applied_received_at_idx on bank_notices (received_at)
      where applied_at is not null`,
  },
  ...searchFilterIndexes,
];
