import { sql, type Kysely, type Migration } from 'kysely';

export const adminAudit: Migration = {
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
};
