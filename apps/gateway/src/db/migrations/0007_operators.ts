import { sql, type Kysely, type Migration } from 'kysely';

export const operators: Migration = {
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
    await sql`create unique index operators_active_name_idx on operators (name) where revoked_at is null`.execute(db);
  },
};
