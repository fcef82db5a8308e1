import { sql, type Kysely, type Migration } from 'kysely';

export const consolePeople: Migration = {
  // People who sign in to the console, their one-time invitations, their server-side sessions and
  // the failed sign-ins the limits count (people/*, docs/console.md). New tables only: the previous
  // release never reads them.
  async up(db: Kysely<unknown>) {
    await sql`${sql.raw(CONSOLE_PEOPLE)}`.execute(db);
  },
};

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
