import { sql, type Kysely, type Migration } from 'kysely';

export const claimDueEvents: Migration = {
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
};
