import { sql, type Kysely, type Migration } from 'kysely';

export const SCHEMA = 'callbacks';

export const migrations: Record<string, Migration> = {
  '0001_events_and_attempts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('events')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('target_host', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'dead')`))
        .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failures_in_run', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'timestamptz')
        .addColumn('locked_until', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`date_trunc('milliseconds', now())`)) // ms, like the JS Date in list cursors
        .addColumn('delivered_at', 'timestamptz')
        .addColumn('dead_at', 'timestamptz')
        .execute();
      // The delivery queue: only pending events, by due time.
      await sql`create index events_due_idx on events (next_attempt_at) where status = 'pending'`.execute(db);
      // Tenant listings, newest first, optionally by status.
      await db.schema
        .createIndex('events_tenant_created_idx')
        .on('events')
        .columns(['tenant_id', 'created_at desc', 'event_id desc'])
        .execute();
      await db.schema
        .createIndex('events_tenant_status_created_idx')
        .on('events')
        .columns(['tenant_id', 'status', 'created_at desc', 'event_id desc'])
        .execute();
      await db.schema
        .createTable('attempts')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull().references('events.event_id'))
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('response_excerpt', 'text')
        .execute();
      await db.schema.createIndex('attempts_event_idx').on('attempts').columns(['event_id', 'attempted_at']).execute();
    },
  },
  '0002_event_trace_context': {
    async up(db: Kysely<unknown>) {
      // The trace context of the callback request the event came from: each delivery attempt is traced
      // as its child, however long after (and on whichever worker) it runs. Null for older events.
      await db.schema.alterTable('events').addColumn('trace_context', 'json').execute();
    },
  },
  '0003_claim_due_events': {
    async up(db: Kysely<unknown>) {
      // The claim, as a function so that it can fix its plan. Under a burst the table's statistics lag
      // (they say almost nothing is pending), and the planner then reads every due row through a bitmap
      // scan and sorts them, which grows with the backlog (about 10 ms per claim at 5,000 waiting). The
      // due index read in order stops after the rows it takes, at any backlog.
      await sql`
        create function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int)
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with candidates as (
            select event_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select h from unnest(busy_hosts, busy_room) as b(h, r) where r <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select c.event_id, coalesce(b.r, per_host) as room,
              row_number() over (partition by c.target_host order by c.next_attempt_at) as place
            from candidates c left join unnest(busy_hosts, busy_room) as b(h, r) on b.h = c.target_host
          )
          update events set next_attempt_at = now() + lease, locked_until = now() + lease
          from ranked
          where events.event_id = ranked.event_id and ranked.place <= ranked.room
          returning events.*
        $$`.execute(db);
    },
  },
};
