import { sql, type Kysely, type Migration } from 'kysely';

export const clientIdAsSent: Migration = {
  async up(db: Kysely<unknown>) {
    // The key (uuid) matches any spelling; this is the id as the ERP wrote it at creation, returned in
    // every answer. Rows from before keep their stored (lower-case) spelling.
    await db.schema.alterTable('clients').addColumn('client_id_as_sent', 'text').execute();
    await sql`update clients set client_id_as_sent = client_id::text`.execute(db);
    await db.schema
      .alterTable('clients')
      .alterColumn('client_id_as_sent', (c) => c.setNotNull())
      .execute();
  },
};
