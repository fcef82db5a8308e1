import { sql, type RawBuilder } from 'kysely';

/**
 * claim_due_events as 0004 wrote it (see there for how it claims); `setOnClaim` is what a claim writes
 * on the rows it takes, which 0005 extends with a fencing token and 0006 with the claiming worker
 * (an extra parameter, `moreParameters`).
 */
export function claimDueEventsFunction(setOnClaim: RawBuilder<unknown>, moreParameters: RawBuilder<unknown> = sql``) {
  return sql`
        create or replace function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int${moreParameters})
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with recursive room as (
            select h as target_host, r as room from unnest(busy_hosts, busy_room) as b(h, r)
          ), oldest as (
            select event_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select target_host from room where room <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select o.event_id, coalesce(r.room, per_host) as room,
              row_number() over (partition by o.target_host order by o.next_attempt_at) as place
            from oldest o left join room r on r.target_host = o.target_host
          ), by_host_needed as (
            select (select count(*) from oldest) = max_count and exists (select 1 from ranked where place > room) as yes
          ), hosts(target_host, head) as (
            (select target_host, next_attempt_at from events where status = 'pending'
              order by target_host, next_attempt_at limit 1)
            union all
            select n.target_host, n.next_attempt_at from hosts h cross join lateral (
              select target_host, next_attempt_at from events
              where status = 'pending' and target_host > h.target_host
              order by target_host, next_attempt_at limit 1) n
          ), due_hosts as (
            select h.target_host, h.head, coalesce(r.room, per_host) as room
            from hosts h left join room r on r.target_host = h.target_host
            where h.head <= now() and coalesce(r.room, per_host) > 0
            order by h.head
            limit max_count
          ), bound as (
            select case when count(*) < max_count then now() else max(head) end as until from due_hosts
          ), host_candidates as (
            select c.event_id, c.next_attempt_at from due_hosts d cross join bound cross join lateral (
              select event_id, next_attempt_at from events
              where status = 'pending'
                and (target_host, next_attempt_at) >= (d.target_host, '-infinity'::timestamptz)
                and (target_host, next_attempt_at) <= (d.target_host, bound.until)
              order by target_host, next_attempt_at
              limit least(d.room, max_count)) c
          ), by_host as (
            select e.event_id
            from (select event_id, next_attempt_at from host_candidates order by next_attempt_at) c
            cross join lateral (
              select event_id from events
              where events.event_id = c.event_id and status = 'pending' and next_attempt_at <= now()
              for update skip locked
            ) e
            order by c.next_attempt_at
            limit max_count
          ), claimed as (
            select event_id from ranked where place <= room and not (select yes from by_host_needed)
            union all
            select event_id from by_host where (select yes from by_host_needed)
          )
          update events set ${setOnClaim}
          from claimed
          where events.event_id = claimed.event_id
          returning events.*
        $$`;
}

/**
 * claim_due_events as 0008 writes it: 0006's claim (see 0004 for how it claims) with each tenant's
 * room beside each host's. Tenants without room are skipped in the cheap read by due time; when a
 * tenant or a host goes over its room there, the claim goes host by host as before, where a tenant
 * whose event heads a host's queue brings no more such hosts than its room, and then keeps, of each
 * tenant's candidates, the oldest its room allows. So a tenant's backlog on many hosts does not take
 * the places of other tenants' hosts. A claim may still take fewer than max_count while more is due
 * (a host's candidates were mostly a full tenant's, behind its head); the next one takes them.
 */
export function claimDueEventsPerTenantFunction() {
  return sql`
        create or replace function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int,
          worker uuid, busy_tenants uuid[], busy_tenant_room int[], per_tenant int)
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with recursive room as (
            select h as target_host, r as room from unnest(busy_hosts, busy_room) as b(h, r)
          ), tenant_room as (
            select t as tenant_id, r as room from unnest(busy_tenants, busy_tenant_room) as b(t, r)
          ), oldest as (
            select event_id, tenant_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select target_host from room where room <= 0)))
              and not (tenant_id = any(array(select tenant_id from tenant_room where room <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select o.event_id,
              coalesce(r.room, per_host) as room,
              row_number() over (partition by o.target_host order by o.next_attempt_at) as place,
              coalesce(t.room, per_tenant) as tenant_room,
              row_number() over (partition by o.tenant_id order by o.next_attempt_at) as tenant_place
            from oldest o
              left join room r on r.target_host = o.target_host
              left join tenant_room t on t.tenant_id = o.tenant_id
          ), by_host_needed as (
            select (select count(*) from oldest) = max_count
              and exists (select 1 from ranked where place > room or tenant_place > tenant_room) as yes
          ), hosts(target_host, head, tenant_id) as (
            (select target_host, next_attempt_at, tenant_id from events where status = 'pending'
              order by target_host, next_attempt_at limit 1)
            union all
            select n.target_host, n.next_attempt_at, n.tenant_id from hosts h cross join lateral (
              select target_host, next_attempt_at, tenant_id from events
              where status = 'pending' and target_host > h.target_host
              order by target_host, next_attempt_at limit 1) n
          ), due_hosts as (
            select target_host, head, room from (
              select h.target_host, h.head, coalesce(r.room, per_host) as room, coalesce(t.room, per_tenant) as tenant_room,
                row_number() over (partition by h.tenant_id order by h.head) as tenant_place
              from hosts h
                left join room r on r.target_host = h.target_host
                left join tenant_room t on t.tenant_id = h.tenant_id
              where h.head <= now() and coalesce(r.room, per_host) > 0) x
            where tenant_place <= tenant_room
            order by head
            limit max_count
          ), bound as (
            select case when count(*) < max_count then now() else max(head) end as until from due_hosts
          ), host_candidates as (
            select c.event_id, c.tenant_id, c.next_attempt_at from due_hosts d cross join bound cross join lateral (
              select event_id, tenant_id, next_attempt_at from events
              where status = 'pending'
                and (target_host, next_attempt_at) >= (d.target_host, '-infinity'::timestamptz)
                and (target_host, next_attempt_at) <= (d.target_host, bound.until)
              order by target_host, next_attempt_at
              limit least(d.room, max_count)) c
          ), tenant_candidates as (
            select event_id, next_attempt_at from (
              select h.event_id, h.next_attempt_at, coalesce(t.room, per_tenant) as room,
                row_number() over (partition by h.tenant_id order by h.next_attempt_at) as place
              from host_candidates h left join tenant_room t on t.tenant_id = h.tenant_id) c
            where place <= room
          ), by_host as (
            select e.event_id
            from (select event_id, next_attempt_at from tenant_candidates order by next_attempt_at) c
            cross join lateral (
              select event_id from events
              where events.event_id = c.event_id and status = 'pending' and next_attempt_at <= now()
              for update skip locked
            ) e
            order by c.next_attempt_at
            limit max_count
          ), claimed as (
            select event_id from ranked
            where place <= room and tenant_place <= tenant_room and not (select yes from by_host_needed)
            union all
            select event_id from by_host where (select yes from by_host_needed)
          )
          update events set next_attempt_at = now() + lease, locked_until = now() + lease,
            lease_token = gen_random_uuid(), worker_id = worker
          from claimed
          where events.event_id = claimed.event_id
          returning events.*
        $$`;
}
