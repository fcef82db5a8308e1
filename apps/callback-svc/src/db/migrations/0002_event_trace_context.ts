import { type Kysely, type Migration } from 'kysely';

export const eventTraceContext: Migration = {
  async up(db: Kysely<unknown>) {
    // The trace context of the callback request the event came from: each delivery attempt is traced
    // as its child, however long after (and on whichever worker) it runs. Null for older events.
    await db.schema.alterTable('events').addColumn('trace_context', 'json').execute();
  },
};
