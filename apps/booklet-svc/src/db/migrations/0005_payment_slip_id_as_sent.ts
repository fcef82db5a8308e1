import { sql, type Kysely, type Migration } from 'kysely';

export const paymentSlipIdAsSent: Migration = {
  async up(db: Kysely<unknown>) {
    // The slip id as the ERP spelled it on its charges, for answers and callbacks; the uuid
    // key still matches any case. Booklets from before keep their stored (lower-case) spelling.
    await db.schema.alterTable('booklets').addColumn('payment_slip_id_as_sent', 'text').execute();
    await sql`update booklets set payment_slip_id_as_sent = payment_slip_id::text`.execute(db);
    await db.schema
      .alterTable('booklets')
      .alterColumn('payment_slip_id_as_sent', (c) => c.setNotNull())
      .execute();
  },
};
