import type { Kysely, Migration } from 'kysely';

export const notificationTraceContext: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('notifications').addColumn('trace_context', 'json').execute();
  },
};
