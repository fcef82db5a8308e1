import { sql, type Kysely, type Migration } from 'kysely';
import { claimDueEventsFunction } from './claim-due-events';

export const claimDueEventsPerHost: Migration = {
  async up(db: Kysely<unknown>) {
    // 0003 took the oldest max_count due rows and only then applied each host's room, so a host with a
    // little room and an old backlog filled the candidates: the claim returned its room's worth and
    // nothing for other hosts with room, whose due events waited while the backlog lasted.
    //
    // Now the claim first makes the same cheap read as before: the oldest max_count due rows by the due
    // index, which stops after the rows it takes at any backlog. When none of them goes over its host's
    // room, or the queue had fewer, they are the answer, as before. Otherwise (a full window with a host
    // over its room) it claims host by host on the per-host index below: the hosts with pending rows,
    // one index probe each (a loose index scan); the max_count of them whose oldest row is due soonest;
    // the oldest due rows of each, up to its room and no later than the latest of those heads (the
    // max_count-th claimable row is no later); of these, the oldest max_count, locked one by one in that
    // order (a row another claim holds is skipped and the next taken). One probe per host with pending
    // work plus the rows read; never the whole backlog.
    //
    // The plan holds with statistics that lag (a burst after a quiet time, or after a few hosts): the
    // per-host read compares (target_host, next_attempt_at) as a row and orders by both, which only the
    // per-host index serves, and the lock looks rows up by id one at a time. Written plainly, the
    // planner walked the due index filtering by host, once per host: 1 s and 4 s per claim at 1,000
    // hosts. 20,000 due rows, a claim of 1,000 (of 50), median ms, most of it updating the rows taken:
    //   3 hosts:                                    15-20 (1.3-1.7) before, 17-21 (1.6-2.0) after
    //   1,000 hosts:                                17-19 (1.2-1.7) before, 20-27 (1.7-2.0) after
    //   oldest host with room 1, 3 hosts:           1 event claimed before; 19-30 (1.7-2.3)
    //   oldest host with room 1, 1,000 hosts:       1 event claimed before; 31-47 (7-11)
    await sql`create index events_host_due_idx on events (target_host, next_attempt_at) where status = 'pending'`.execute(
      db,
    );
    await claimDueEventsFunction(sql`next_attempt_at = now() + lease, locked_until = now() + lease`).execute(db);
  },
};
