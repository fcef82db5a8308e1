import { sql, type Kysely, type Migration } from 'kysely';

export const erpIdsAsSent: Migration = {
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
};
