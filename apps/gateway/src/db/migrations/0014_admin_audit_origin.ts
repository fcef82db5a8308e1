import { sql, type Kysely, type Migration } from 'kysely';

export const adminAuditOrigin: Migration = {
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
};
