import { sql, type Kysely, type Migration } from 'kysely';

export const clients: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('clients')
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('client_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('tax_id', 'text', (c) => c.notNull())
      .addColumn('tax_id_normalized', 'text', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('number', 'text')
      .addColumn('neighborhood', 'text')
      .addColumn('city', 'text')
      .addColumn('state', 'text')
      .addColumn('zip_code', 'text')
      .addColumn('complement', 'text')
      .addColumn('telephone', 'text')
      .addColumn('phone_number', 'text')
      .addColumn('email', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addPrimaryKeyConstraint('clients_pk', ['tenant_id', 'client_id'])
      .execute();
    await db.schema
      .createIndex('clients_tax_id_idx')
      .on('clients')
      .columns(['tenant_id', 'tax_id_normalized'])
      .execute();
  },
};
