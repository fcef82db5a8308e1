import { sql, type Kysely, type Migration } from 'kysely';
import type { Keyring } from '@payments/credential-seal';
import { sealSigningSecret } from '../tenancy/signing-secrets';

export const SCHEMA = 'gateway';

/**
 * The gateway's migrations. Sealing the signing secrets stored in clear (0004) needs the keyring of the
 * gateway's configuration; without one, that migration refuses a database that has any to seal (a
 * fresh database, as tests make, has none).
 */
export function gatewayMigrations(keyring?: Keyring): Record<string, Migration> {
  return {
    ...baseMigrations,
    '0004_sealed_signing_secrets': {
      // Tenants' signing secrets move from clear text to sealed values, and may have a previous one.
      async up(db: Kysely<unknown>) {
        await sql`alter table tenants
          add column sealed_signing_secret text,
          add column sealed_previous_signing_secret text,
          add column previous_valid_until timestamptz,
          add column signing_secret_rotated_at timestamptz`.execute(db);
        const clear = await sql<{ id: string; signing_secret: string }>`select id, signing_secret from tenants`.execute(
          db,
        );
        if (clear.rows.length > 0 && !keyring)
          throw new Error(
            `${clear.rows.length} tenant signing secrets are stored in clear and no CREDENTIALS_ENCRYPTION_KEY was given to seal them`,
          );
        for (const row of clear.rows)
          await sql`update tenants set sealed_signing_secret = ${sealSigningSecret(keyring!, row.id, row.signing_secret)}
            where id = ${row.id}`.execute(db);
        await sql`alter table tenants drop column signing_secret`.execute(db);
        await sql`alter table tenants alter column sealed_signing_secret set not null`.execute(db);
      },
    },
    '0005_admin_audit': {
      async up(db: Kysely<unknown>) {
        await sql`create table admin_audit (
          id bigint generated always as identity primary key,
          at timestamptz not null default now(),
          operator text not null,
          action text not null,
          tenant_id uuid,
          details jsonb not null default '{}'::jsonb
        )`.execute(db);
        await sql`create index admin_audit_tenant_idx on admin_audit (tenant_id, id)`.execute(db);
      },
    },
    '0006_rate_limit_buckets': {
      // One token bucket per tenant, shared by every gateway instance (see db/admit-requests.ts).
      async up(db: Kysely<unknown>) {
        await sql`create table rate_limit_buckets (
          key text primary key,
          tokens double precision not null,
          updated_at timestamptz not null
        )`.execute(db);
      },
    },
    '0007_operators': {
      // Operator credentials of the admin API: stored as SHA-256, like integration tokens.
      async up(db: Kysely<unknown>) {
        await sql`create table operators (
          id uuid primary key,
          name text not null,
          credential_hash bytea not null unique,
          credential_hint text not null,
          created_at timestamptz not null default now(),
          revoked_at timestamptz,
          last_used_at timestamptz
        )`.execute(db);
        // One active operator per name: the audit names operators, so two alike would blur it.
        await sql`create unique index operators_active_name_idx on operators (name) where revoked_at is null`.execute(
          db,
        );
      },
    },
    '0008_admit_requests': {
      // The door of every API request in one round trip: see http/admission.ts.
      async up(db: Kysely<unknown>) {
        await sql`${sql.raw(ADMIT_REQUESTS)}`.execute(db);
      },
    },
    '0009_pix_provider_accounts': {
      // A `pix` account: any bank's PIX API on the Central Bank's standard (docs/providers/pix.md). The
      // wider check is NOT VALID: every stored version meets the narrower one, so none is read under the lock.
      async up(db: Kysely<unknown>) {
        await sql`alter table provider_accounts
          drop constraint provider_accounts_provider_check,
          add constraint provider_accounts_provider_check check (provider in ('sandbox', 'inter', 'pix')) not valid`.execute(
          db,
        );
      },
    },
    '0010_idempotency_lock_token': {
      // The lock token of an Idempotency-Key (idempotency/idempotency-store.ts): a slow attempt whose
      // lock was taken over by a retry must not complete or release the key the retry now holds.
      async up(db: Kysely<unknown>) {
        await sql`alter table idempotency_keys add column lock_token uuid`.execute(db);
      },
    },
    '0011_admit_requests_lock_tokens': {
      // The door's claims write their lock token too (see ADMIT_REQUESTS_WITH_LOCK_TOKENS).
      async up(db: Kysely<unknown>) {
        await sql`${sql.raw(ADMIT_REQUESTS_WITH_LOCK_TOKENS)}`.execute(db);
      },
    },
    '0012_hot_tables_autovacuum': {
      // Idempotency keys turn over a day's requests a day (one per ERP request),
      // each inserted, updated once with its answer and deleted by the sweep: vacuumed after 1% of
      // dead rows rather than 20%, faster, and with room on each page for the answer's update (HOT).
      // Rate-limit buckets are a few rows updated by every admission: vacuumed after a fixed number
      // of dead rows, with half of each page free. Storage parameters take only a SHARE UPDATE
      // EXCLUSIVE lock: the previous release goes on reading and writing meanwhile.
      async up(db: Kysely<unknown>) {
        await sql`alter table idempotency_keys set (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.01,
          autovacuum_vacuum_threshold = 10000, autovacuum_analyze_scale_factor = 0.02,
          autovacuum_vacuum_cost_limit = 1000, toast.autovacuum_vacuum_scale_factor = 0.01)`.execute(db);
        await sql`alter table rate_limit_buckets set (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
          autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0,
          autovacuum_analyze_threshold = 1000)`.execute(db);
      },
    },
    '0013_console_people': {
      // People who sign in to the console, their one-time invitations, their server-side sessions and
      // the failed sign-ins the limits count (people/*, docs/console.md). New tables only: the previous
      // release never reads them.
      async up(db: Kysely<unknown>) {
        await sql`${sql.raw(CONSOLE_PEOPLE)}`.execute(db);
      },
    },
    '0014_admin_audit_origin': {
      // Where an audited action came from (console, admin API, CLI, code), the client address, the
      // request id and the console user: nullable columns, so the previous release's inserts still fit.
      async up(db: Kysely<unknown>) {
        await sql`alter table admin_audit
          add column source text,
          add column address text,
          add column request_id text,
          add column user_id uuid,
          add column user_email text`.execute(db);
      },
    },
  };
}

/**
 * Console users (one active user per e-mail, any case: sign-in is by e-mail), invitations (the token
 * and the TOTP secret kept until accepted), sessions (the id stored as its SHA-256 only) and failed
 * sign-ins (a sliding window per e-mail, credential and address).
 */
const CONSOLE_PEOPLE = `
create table console_users (
  id uuid primary key,
  email text not null,
  name text not null,
  role text not null check (role in ('tenant_viewer', 'tenant_admin', 'operator')),
  tenant_id uuid references tenants (id),
  password_hash text not null,
  sealed_totp_secret text not null,
  totp_last_step bigint not null default 0,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  last_sign_in_at timestamptz,
  check ((role = 'operator') = (tenant_id is null))
);
create unique index console_users_active_email_idx on console_users (lower(email)) where revoked_at is null;
create index console_users_tenant_idx on console_users (tenant_id, created_at);

create table console_invitations (
  id uuid primary key,
  token_hash bytea not null unique,
  email text not null,
  role text not null check (role in ('tenant_viewer', 'tenant_admin', 'operator')),
  tenant_id uuid references tenants (id),
  sealed_totp_secret text,
  invited_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  user_id uuid references console_users (id),
  check ((role = 'operator') = (tenant_id is null))
);

create table console_sessions (
  id_hash bytea primary key,
  role text not null check (role in ('tenant_viewer', 'tenant_admin', 'operator')),
  tenant_id uuid references tenants (id),
  user_id uuid references console_users (id),
  token_id uuid references integration_tokens (id),
  operator_id uuid references operators (id),
  started_at timestamptz not null,
  expires_at timestamptz not null,
  idle_expires_at timestamptz not null,
  ended_at timestamptz,
  ended_reason text,
  address text
);
create index console_sessions_user_idx on console_sessions (user_id) where ended_at is null;
create index console_sessions_token_idx on console_sessions (token_id) where ended_at is null;
create index console_sessions_tenant_idx on console_sessions (tenant_id) where ended_at is null;
create index console_sessions_operator_idx on console_sessions (operator_id) where ended_at is null;

create table console_sign_in_failures (
  key text not null,
  at timestamptz not null
);
create index console_sign_in_failures_key_idx on console_sign_in_failures (key, at);
`;

/**
 * admit_requests: for many requests at once, in the caller's statement (one round trip, one commit),
 * takes each request's charges from its tenant's token bucket in the order given (buckets created
 * when missing and locked in key order, so two gateways cannot deadlock; a request finding too few
 * tokens takes none), then claims the Idempotency-Key of each request the limit let through (new keys
 * inserted, expired ones taken over, in key order; a key named twice is claimed for its first request).
 * One row per request, in order: whether the limit let it through (and if not, in how many ms it could),
 * whether its key was claimed, and otherwise the key's record as it stands.
 */
const ADMIT_REQUESTS = `
create function admit_requests(
  p_bucket text[], p_cost float8[], p_burst float8, p_per_second float8,
  p_tenant uuid[], p_key text[], p_method text[], p_path text[], p_fingerprint text[],
  p_now timestamptz, p_expires timestamptz)
returns table (taken boolean, retry_after_ms float8, claimed boolean, fingerprint text, locked_at timestamptz,
  status_code int, response_body text, response_headers jsonb)
language plpgsql as $fn$
declare
  n int := coalesce(array_length(p_tenant, 1), 0);
  held jsonb := '{}';
  ok boolean[] := array_fill(true, array[n]);
  wait float8[] := array_fill(null::float8, array[n]);
  tokens float8;
  bucket record;
begin
  for bucket in
    insert into rate_limit_buckets as b (key, tokens, updated_at)
      select k, p_burst, now() from unnest(p_bucket) as k where k is not null group by k order by k
    on conflict (key) do update set tokens = b.tokens
    returning b.key, least(p_burst, b.tokens + extract(epoch from (now() - b.updated_at)) * p_per_second) as left
  loop
    held := held || jsonb_build_object(bucket.key, bucket.left);
  end loop;
  for i in 1..n loop
    continue when p_bucket[i] is null;
    tokens := (held ->> p_bucket[i])::float8;
    if p_cost[i] > p_burst then
      ok[i] := false;
      wait[i] := 'Infinity';
    elsif tokens >= p_cost[i] then
      held := jsonb_set(held, array[p_bucket[i]], to_jsonb(tokens - p_cost[i]));
    else
      ok[i] := false;
      wait[i] := greatest(1, ceil((p_cost[i] - tokens) / p_per_second * 1000));
    end if;
  end loop;
  update rate_limit_buckets as b set tokens = v.value::float8, updated_at = now()
    from jsonb_each_text(held) as v where b.key = v.key;
  return query
  with req as (
    select u.* from unnest(p_tenant, p_key, p_method, p_path, p_fingerprint, ok, wait)
      with ordinality as u(tenant_id, key, method, path, fp, ok, wait, i)),
  firsts as (
    select distinct on (r.tenant_id, r.key) r.* from req r
    where r.ok and r.key is not null order by r.tenant_id, r.key, r.i),
  claims as (
    insert into idempotency_keys as k (tenant_id, key, method, path, fingerprint, locked_at, created_at, expires_at)
      select f.tenant_id, f.key, f.method, f.path, f.fp, p_now, p_now, p_expires from firsts f order by f.tenant_id, f.key
    on conflict (tenant_id, key) do update set method = excluded.method, path = excluded.path,
      fingerprint = excluded.fingerprint, locked_at = excluded.locked_at, status_code = null, response_body = null,
      response_headers = null, created_at = excluded.created_at, expires_at = excluded.expires_at
      where k.expires_at < p_now
    returning k.tenant_id, k.key)
  -- A later request with a key its batch claimed finds that claim; any other finds the key's record.
  select r.ok, r.wait, c.key is not null,
    case when cd.key is not null then d.fp else e.fingerprint end,
    case when cd.key is not null then p_now else e.locked_at end,
    case when cd.key is not null then null else e.status_code end,
    case when cd.key is not null then null else e.response_body end,
    case when cd.key is not null then null else e.response_headers end
  from req r
  left join firsts f on f.i = r.i
  left join claims c on c.tenant_id = f.tenant_id and c.key = f.key
  left join firsts d on d.tenant_id = r.tenant_id and d.key = r.key and d.i <> r.i
  left join claims cd on cd.tenant_id = d.tenant_id and cd.key = d.key
  left join idempotency_keys e on r.ok and c.key is null and e.tenant_id = r.tenant_id and e.key = r.key
  order by r.i;
end
$fn$`;

/**
 * admit_requests as migration 0008 made it, with one more argument: each claim's lock token
 * (p_lock_token, one per request, null without a key), written with the claim, on a new key and on
 * an expired one taken over alike, so that only the attempt holding it may complete or release the
 * key (idempotency/idempotency-store.ts). The eleven-argument version stays beside it, for instances
 * of the previous release during a rolling deploy (their claims are fenced on locked_at alone).
 */
const ADMIT_REQUESTS_WITH_LOCK_TOKENS = `
create function admit_requests(
  p_bucket text[], p_cost float8[], p_burst float8, p_per_second float8,
  p_tenant uuid[], p_key text[], p_method text[], p_path text[], p_fingerprint text[], p_lock_token uuid[],
  p_now timestamptz, p_expires timestamptz)
returns table (taken boolean, retry_after_ms float8, claimed boolean, fingerprint text, locked_at timestamptz,
  status_code int, response_body text, response_headers jsonb)
language plpgsql as $fn$
declare
  n int := coalesce(array_length(p_tenant, 1), 0);
  held jsonb := '{}';
  ok boolean[] := array_fill(true, array[n]);
  wait float8[] := array_fill(null::float8, array[n]);
  tokens float8;
  bucket record;
begin
  for bucket in
    insert into rate_limit_buckets as b (key, tokens, updated_at)
      select k, p_burst, now() from unnest(p_bucket) as k where k is not null group by k order by k
    on conflict (key) do update set tokens = b.tokens
    returning b.key, least(p_burst, b.tokens + extract(epoch from (now() - b.updated_at)) * p_per_second) as left
  loop
    held := held || jsonb_build_object(bucket.key, bucket.left);
  end loop;
  for i in 1..n loop
    continue when p_bucket[i] is null;
    tokens := (held ->> p_bucket[i])::float8;
    if p_cost[i] > p_burst then
      ok[i] := false;
      wait[i] := 'Infinity';
    elsif tokens >= p_cost[i] then
      held := jsonb_set(held, array[p_bucket[i]], to_jsonb(tokens - p_cost[i]));
    else
      ok[i] := false;
      wait[i] := greatest(1, ceil((p_cost[i] - tokens) / p_per_second * 1000));
    end if;
  end loop;
  update rate_limit_buckets as b set tokens = v.value::float8, updated_at = now()
    from jsonb_each_text(held) as v where b.key = v.key;
  return query
  with req as (
    select u.* from unnest(p_tenant, p_key, p_method, p_path, p_fingerprint, p_lock_token, ok, wait)
      with ordinality as u(tenant_id, key, method, path, fp, lock_token, ok, wait, i)),
  firsts as (
    select distinct on (r.tenant_id, r.key) r.* from req r
    where r.ok and r.key is not null order by r.tenant_id, r.key, r.i),
  claims as (
    insert into idempotency_keys as k (tenant_id, key, method, path, fingerprint, locked_at, lock_token, created_at,
      expires_at)
      select f.tenant_id, f.key, f.method, f.path, f.fp, p_now, f.lock_token, p_now, p_expires from firsts f
      order by f.tenant_id, f.key
    on conflict (tenant_id, key) do update set method = excluded.method, path = excluded.path,
      fingerprint = excluded.fingerprint, locked_at = excluded.locked_at, lock_token = excluded.lock_token,
      status_code = null, response_body = null, response_headers = null, created_at = excluded.created_at,
      expires_at = excluded.expires_at
      where k.expires_at < p_now
    returning k.tenant_id, k.key)
  -- A later request with a key its batch claimed finds that claim; any other finds the key's record.
  select r.ok, r.wait, c.key is not null,
    case when cd.key is not null then d.fp else e.fingerprint end,
    case when cd.key is not null then p_now else e.locked_at end,
    case when cd.key is not null then null else e.status_code end,
    case when cd.key is not null then null else e.response_body end,
    case when cd.key is not null then null else e.response_headers end
  from req r
  left join firsts f on f.i = r.i
  left join claims c on c.tenant_id = f.tenant_id and c.key = f.key
  left join firsts d on d.tenant_id = r.tenant_id and d.key = r.key and d.i <> r.i
  left join claims cd on cd.tenant_id = d.tenant_id and cd.key = d.key
  left join idempotency_keys e on r.ok and c.key is null and e.tenant_id = r.tenant_id and e.key = r.key
  order by r.i;
end
$fn$`;

const baseMigrations: Record<string, Migration> = {
  '0001_tenants_and_tokens': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c
            .notNull()
            .defaultTo('active')
            .check(sql`status in ('active', 'disabled')`),
        )
        .addColumn('signing_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('disabled_at', 'timestamptz')
        .execute();
      await db.schema
        .createTable('integration_tokens')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id'))
        .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
        .addColumn('token_hint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('revoked_at', 'timestamptz')
        .addColumn('last_used_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('integration_tokens_tenant_idx')
        .on('integration_tokens')
        .column('tenant_id')
        .execute();
      await db.schema
        .createTable('jwt_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('private_key_pem', 'text', (c) => c.notNull())
        .addColumn('public_key_pem', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0002_idempotency_keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('locked_at', 'timestamptz')
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('response_headers', 'jsonb')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
    },
  },
  '0003_provider_accounts': {
    // One row per version: setting an account supersedes the current row and adds one, so a charge
    // accepted under a version keeps it. At most one current version per tenant.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('provider_accounts')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id'))
        .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('sandbox', 'inter')`))
        .addColumn('account_key', 'text', (c) => c.notNull())
        .addColumn('beneficiary', 'jsonb', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('sealed_credentials', 'text')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('superseded_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('provider_accounts_current_idx')
        .on('provider_accounts')
        .column('tenant_id')
        .unique()
        .where(sql.ref('superseded_at'), 'is', null)
        .execute();
      // The newest credentials of one bank account (tenants.provider-credentials).
      await db.schema
        .createIndex('provider_accounts_key_idx')
        .on('provider_accounts')
        .columns(['tenant_id', 'account_key', 'created_at'])
        .execute();
    },
  },
};

/** Without a keyring: enough for a fresh database (tests), and for the names of the migrations. */
export const migrations: Record<string, Migration> = gatewayMigrations();
