import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  addToHistogram,
  DURATION_BOUNDS_MS,
  emptyHistogram,
  LATENCY_BOUNDS_MS,
  type DeliveryRollupStore,
  type DeliveryStatsReader,
  type DeliverySums,
} from '../domain/delivery-stats';
import type { CallbacksDatabase } from './schema';

/**
 * delivery_minutes (migration 0007): rebuilt by the rollup from the attempts of the last minutes
 * and the queue's dead events (migration 0009: only what is owed), read by the
 * admin statistics. See domain/delivery-stats.ts.
 */
export class DeliveryStatsStore implements DeliveryRollupStore, DeliveryStatsReader {
  constructor(private readonly db: Kysely<CallbacksDatabase>) {}

  async rollUp(lookbackMinutes: number, retentionDays: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Per schema: several systems (or tests) may share a database. Transaction-scoped: a crashed
      // instance's lock goes with its connection; the others skip this run, not wait for it.
      const { rows: locked } = await sql<{ ok: boolean }>`
        select pg_try_advisory_xact_lock(hashtext(current_schema() || '.delivery_rollup')) as ok`.execute(trx);
      if (!locked[0]?.ok) return false;
      // From the watermark (a catch-up after downtime) or the lookback, whichever is older; never
      // before the retention. In Postgres time, as the rows' due times are.
      const { rows: span } = await sql<{ from: Date; current: Date }>`
        select greatest(least(coalesce((select rolled_until from delivery_rollup), '-infinity'),
                              date_trunc('minute', now()) - make_interval(mins => ${lookbackMinutes})),
                        date_trunc('minute', now()) - make_interval(days => ${retentionDays})) as "from",
               date_trunc('minute', now()) as current`.execute(trx);
      const { from, current } = span[0];
      // Rebuilt whole (delete, then insert what the source rows say), so a run repeated, or one that
      // sees a late attempt, or a dead event retried since, leaves the same rows as a single run would.
      await sql`delete from delivery_minutes where minute >= ${from}`.execute(trx);
      await sql`
        with attempts_in as (
          select date_trunc('minute', a.attempted_at) as minute, a.tenant_id, a.target_host, a.attempted_at, a.duration_ms,
            coalesce(a.status_code between 200 and 299, false) as ok,
            left(concat_ws(': ', a.error, a.response_excerpt), 200) as error,
            -- A delivery's end-to-end latency: from its event's creation (Postgres's clock) to the end
            -- of this attempt (the worker's, which may run a little ahead or behind: never below 0).
            -- Null for failed attempts, and for events older than event_keys (migration 0009).
            case when a.status_code between 200 and 299 then
              greatest(0, round(extract(epoch from a.attempted_at - (select k.created_at from event_keys k
                where k.event_id = a.event_id)) * 1000) + a.duration_ms)::bigint
            end as latency_ms
          from (
            -- Attempts name their host since migration 0009; older ones take their event's, from the
            -- old rows' partition (pruned to it, and to nothing once the retention dropped it).
            select a.attempted_at, a.event_id, a.tenant_id, a.duration_ms, a.status_code, a.error, a.response_excerpt,
              coalesce(a.target_host, (select e.target_host from event_log e
              where e.event_id = a.event_id and e.created_at < log_converted_at())) as target_host
            from attempts a where a.attempted_at >= ${from}
          ) a
        ), counts as (
          select minute, tenant_id, target_host,
            count(*) filter (where ok)::int as delivered,
            count(*) filter (where not ok)::int as failed,
            max(duration_ms) as max_ms,
            max(latency_ms) as latency_max_ms,
            max(attempted_at) filter (where not ok) as last_failure_at,
            (array_agg(error order by attempted_at desc) filter (where not ok))[1] as last_error
          from attempts_in group by 1, 2, 3
        ), by_bucket as (
          select minute, tenant_id, target_host, width_bucket(duration_ms - 1, ${DURATION_BOUNDS_MS}::int[]) as b, count(*)::int as n
          from attempts_in group by 1, 2, 3, 4
        ), histograms as (
          select minute, tenant_id, target_host, array_agg(b::smallint order by b) as buckets, array_agg(n order by b) as counts
          from by_bucket group by 1, 2, 3
        ), by_latency as (
          select minute, tenant_id, target_host, width_bucket(latency_ms - 1, ${LATENCY_BOUNDS_MS}::bigint[]) as b, count(*)::int as n
          from attempts_in where latency_ms is not null group by 1, 2, 3, 4
        ), latencies as (
          select minute, tenant_id, target_host, array_agg(b::smallint order by b) as buckets, array_agg(n order by b) as counts
          from by_latency group by 1, 2, 3
        ), deaths as (
          select date_trunc('minute', dead_at) as minute, tenant_id, target_host, count(*)::int as dead
          from events where status = 'dead' and dead_at >= ${from}
          group by 1, 2, 3
        )
        insert into delivery_minutes (minute, tenant_id, target_host, delivered, failed, dead, duration_buckets,
          duration_counts, duration_max_ms, latency_buckets, latency_counts, latency_max_ms, last_failure_at, last_error)
        select coalesce(c.minute, d.minute), coalesce(c.tenant_id, d.tenant_id), coalesce(c.target_host, d.target_host),
          coalesce(c.delivered, 0), coalesce(c.failed, 0), coalesce(d.dead, 0), coalesce(h.buckets, '{}'), coalesce(h.counts, '{}'),
          c.max_ms, coalesce(l.buckets, '{}'), coalesce(l.counts, '{}'), c.latency_max_ms, c.last_failure_at, c.last_error
        from counts c
        full join deaths d on (d.minute, d.tenant_id, d.target_host) = (c.minute, c.tenant_id, c.target_host)
        left join histograms h on (h.minute, h.tenant_id, h.target_host) = (c.minute, c.tenant_id, c.target_host)
        left join latencies l on (l.minute, l.tenant_id, l.target_host) = (c.minute, c.tenant_id, c.target_host)`.execute(
        trx,
      );
      await sql`delete from delivery_minutes where minute < ${current}::timestamptz - make_interval(days => ${retentionDays})`.execute(
        trx,
      );
      await sql`
        insert into delivery_rollup (id, rolled_until) values (true, ${current})
        on conflict (id) do update set rolled_until = excluded.rolled_until`.execute(trx);
      return true;
    });
  }

  async sumsByBucket(from: Date, to: Date, bucketSeconds: number, tenantId?: string): Promise<DeliverySums<number>[]> {
    const key = sql`(floor(extract(epoch from minute) / ${bucketSeconds}) * ${bucketSeconds} * 1000)::bigint`;
    const rows = await this.sums(key, from, to, tenantId === undefined ? sql`true` : sql`tenant_id = ${tenantId}`);
    return rows.map((r) => ({ ...r, key: Number(r.key) }));
  }

  async sumsByTenantAndHost(from: Date, to: Date) {
    const [tenants, hosts] = await Promise.all([
      this.sums(sql`tenant_id::text`, from, to, sql`true`),
      this.sums(sql`target_host`, from, to, sql`true`),
    ]);
    return { tenants, hosts };
  }

  /** From the queue (events), which holds only what is owed: it counts the backlog, not the history. */
  async pending(): Promise<{ tenants: Map<string, number>; hosts: Map<string, number> }> {
    const count = async (key: RawBuilder<string>) => {
      const { rows } = await sql<{ key: string; n: number }>`
        select ${key} as key, count(*)::int as n from events where status = 'pending' group by 1`.execute(this.db);
      return new Map(rows.map((r) => [r.key, r.n]));
    };
    const [tenants, hosts] = await Promise.all([count(sql`tenant_id::text`), count(sql`target_host`)]);
    return { tenants, hosts };
  }

  /** Sums of the minutes in [from, to) matching `where`, grouped by `key`; histograms added bucket by bucket. */
  private async sums(key: RawBuilder<unknown>, from: Date, to: Date, where: RawBuilder<unknown>) {
    const { rows } = await sql<{
      key: string;
      delivered: string;
      failed: string;
      dead: string;
      max_ms: number | null;
      latency_max_ms: string | null;
      last_failure_at: Date | null;
      last_error: string | null;
      buckets: number[];
      counts: number[];
      latency_buckets: number[];
      latency_counts: number[];
    }>`
      with m as (
        select ${key} as key, * from delivery_minutes where minute >= ${from} and minute < ${to} and ${where}
      ), totals as (
        select key, sum(delivered) as delivered, sum(failed) as failed, sum(dead) as dead, max(duration_max_ms) as max_ms,
          max(latency_max_ms) as latency_max_ms, max(last_failure_at) as last_failure_at,
          (array_agg(last_error order by last_failure_at desc) filter (where last_failure_at is not null))[1] as last_error
        from m group by key
      ), by_bucket as (
        select key, h.b, sum(h.n)::int as n from m cross join lateral unnest(m.duration_buckets, m.duration_counts) as h(b, n)
        group by key, h.b
      ), histograms as (
        select key, array_agg(b order by b) as buckets, array_agg(n order by b) as counts from by_bucket group by key
      ), by_latency as (
        select key, l.b, sum(l.n)::int as n from m cross join lateral unnest(m.latency_buckets, m.latency_counts) as l(b, n)
        group by key, l.b
      ), latencies as (
        select key, array_agg(b order by b) as buckets, array_agg(n order by b) as counts from by_latency group by key
      )
      select t.*, coalesce(h.buckets, '{}') as buckets, coalesce(h.counts, '{}') as counts,
        coalesce(l.buckets, '{}') as latency_buckets, coalesce(l.counts, '{}') as latency_counts
      from totals t left join histograms h on h.key = t.key left join latencies l on l.key = t.key`.execute(this.db);
    return rows.map((r) => {
      const histogram = emptyHistogram();
      addToHistogram(histogram, r.buckets, r.counts, r.max_ms);
      const latency = emptyHistogram(LATENCY_BOUNDS_MS);
      addToHistogram(
        latency,
        r.latency_buckets,
        r.latency_counts,
        r.latency_max_ms === null ? null : Number(r.latency_max_ms),
      );
      return {
        key: String(r.key),
        delivered: Number(r.delivered),
        failed: Number(r.failed),
        dead: Number(r.dead),
        histogram,
        latency,
        lastFailureAt: r.last_failure_at,
        lastError: r.last_error,
      };
    });
  }
}
