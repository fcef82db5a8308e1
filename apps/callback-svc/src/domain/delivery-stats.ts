import {
  STATS_RETENTION_DAYS,
  statsBuckets,
  type DeliveryHealthReply,
  type DeliveryStatsReply,
  type HostDeliveryHealth,
  type StatsWindow,
} from '@payments/contracts';

/**
 * Delivery statistics: per-minute aggregates of attempts and dead events, per tenant and
 * receiving host (table delivery_minutes, migration 0007), rebuilt every few seconds from the source
 * rows by whichever instance takes the rollup's advisory lock, and read by the admin API's
 * statistics (GET /admin/v1/stats/deliveries, /admin/v1/delivery-health).
 */

/**
 * Upper bounds (ms) of the attempt duration histogram's buckets: bucket i holds durations in
 * (DURATION_BOUNDS_MS[i-1], DURATION_BOUNDS_MS[i]] (bucket 0 from 0), the last one (index
 * DURATION_BOUNDS_MS.length) everything longer. Steps of 1.2 to 1.33 (2 to 1 below 5 ms): a
 * percentile interpolated within its bucket is off by a fraction of that step at most. Stored rows
 * name buckets by index: changing the bounds needs the table rebuilt.
 */
export const DURATION_BOUNDS_MS: readonly number[] = [
  1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800, 1000,
  1200, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 8000, 10_000, 12_000, 15_000, 20_000, 25_000, 30_000, 40_000, 50_000,
  60_000,
];
export const DURATION_BUCKETS = DURATION_BOUNDS_MS.length + 1;

/**
 * Upper bounds (ms) of the end-to-end latency histogram (an event's creation to the end of the attempt
 * that delivered it): the attempt bounds, then on to three days, since a delivery after retries
 * comes minutes to days after its event. Same rule as DURATION_BOUNDS_MS: rows name buckets by index.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  ...DURATION_BOUNDS_MS,
  80_000,
  100_000,
  120_000,
  150_000,
  200_000,
  300_000,
  400_000,
  600_000,
  900_000,
  1_200_000,
  1_800_000,
  2_700_000,
  3_600_000,
  5_400_000,
  7_200_000,
  10_800_000,
  14_400_000,
  21_600_000,
  28_800_000,
  43_200_000,
  64_800_000,
  86_400_000,
  129_600_000,
  172_800_000,
  259_200_000,
];

/**
 * A histogram over fixed bounds: the count of every bucket (dense, bounds.length + 1 long) and the
 * largest value.
 */
export interface DurationHistogram {
  counts: number[];
  maxMs: number | null;
  bounds: readonly number[];
}

export function emptyHistogram(bounds: readonly number[] = DURATION_BOUNDS_MS): DurationHistogram {
  return { counts: new Array<number>(bounds.length + 1).fill(0), maxMs: null, bounds };
}

/** Adds sparse (bucket, count) pairs, as stored, into `into`. */
export function addToHistogram(
  into: DurationHistogram,
  buckets: readonly number[],
  counts: readonly number[],
  maxMs: number | null,
): void {
  buckets.forEach((b, i) => {
    if (b >= 0 && b < into.counts.length) into.counts[b] += counts[i] ?? 0;
  });
  if (maxMs !== null) into.maxMs = Math.max(into.maxMs ?? 0, maxMs);
}

/** The bucket a duration falls in (as the rollup's SQL computes it: width_bucket(ms - 1, bounds)). */
export function bucketOf(durationMs: number, bounds: readonly number[] = DURATION_BOUNDS_MS): number {
  let i = 0;
  while (i < bounds.length && durationMs > bounds[i]) i++;
  return i;
}

/**
 * The q-quantile (0 < q <= 1) of a histogram, in whole ms: the bucket holding the rank, then linear
 * within it (durations spread evenly over a bucket give their exact quantile), never above the
 * longest duration seen. Null when the histogram is empty.
 */
export function percentile(h: DurationHistogram, q: number): number | null {
  const total = h.counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let before = 0;
  for (let i = 0; i < h.counts.length; i++) {
    const n = h.counts[i];
    if (before + n >= rank) {
      const lower = i === 0 ? 0 : h.bounds[i - 1];
      const upper = i < h.bounds.length ? h.bounds[i] : (h.maxMs ?? lower);
      const value = lower + ((upper - lower) * (rank - before)) / n;
      return Math.round(h.maxMs === null ? value : Math.min(value, h.maxMs));
    }
    before += n;
  }
  return h.maxMs;
}

/* Reading ------------------------------------------------------------------------------------------ */

/** Sums of delivery_minutes over some minutes, for one key (a bucket start, a tenant, a host). */
export interface DeliverySums<K> {
  key: K;
  delivered: number;
  failed: number;
  dead: number;
  histogram: DurationHistogram;
  /** End-to-end latency of the deliveries (LATENCY_BOUNDS_MS): event created to delivered. */
  latency: DurationHistogram;
  lastFailureAt: Date | null;
  lastError: string | null;
}

/** The reading side of the aggregates (db/delivery-stats-store.ts). */
export interface DeliveryStatsReader {
  /** Sums per bucket of `bucketSeconds` over [from, to), keyed by bucket start (ms since the epoch). */
  sumsByBucket(from: Date, to: Date, bucketSeconds: number, tenantId?: string): Promise<DeliverySums<number>[]>;
  /** Sums over [from, to) per tenant and per host. */
  sumsByTenantAndHost(
    from: Date,
    to: Date,
  ): Promise<{ tenants: DeliverySums<string>[]; hosts: DeliverySums<string>[] }>;
  /** Events pending now, per tenant and per host. */
  pending(): Promise<{ tenants: Map<string, number>; hosts: Map<string, number> }>;
}

/** GET /admin/v1/stats/deliveries: every bucket of the window, zeros included, oldest first. */
export async function deliveryStats(
  reader: DeliveryStatsReader,
  window: StatsWindow,
  tenantId: string | undefined,
  now: Date,
): Promise<DeliveryStatsReply> {
  const { from, to, bucketSeconds, starts } = statsBuckets(window, now);
  const sums = new Map((await reader.sumsByBucket(from, to, bucketSeconds, tenantId)).map((s) => [s.key, s]));
  return {
    window,
    bucket_seconds: bucketSeconds,
    from: from.toISOString(),
    to: to.toISOString(),
    series: starts.map((at) => {
      const s = sums.get(at.getTime());
      const h = s?.histogram ?? emptyHistogram();
      const latency = s?.latency ?? emptyHistogram(LATENCY_BOUNDS_MS);
      return {
        at: at.toISOString(),
        delivered: s?.delivered ?? 0,
        failed: s?.failed ?? 0,
        dead: s?.dead ?? 0,
        p50_ms: percentile(h, 0.5),
        p99_ms: percentile(h, 0.99),
        end_to_end_p50_ms: percentile(latency, 0.5),
        end_to_end_p99_ms: percentile(latency, 0.99),
      };
    }),
  };
}

type HealthFields = Omit<HostDeliveryHealth, 'host'>;

/** GET /admin/v1/delivery-health without tenant names: tenants and hosts seen in the window or pending now, worst first. */
export async function deliveryHealth(
  reader: DeliveryStatsReader,
  window: StatsWindow,
  now: Date,
): Promise<DeliveryHealthReply> {
  const { from, to } = statsBuckets(window, now);
  const [sums, pending] = await Promise.all([reader.sumsByTenantAndHost(from, to), reader.pending()]);
  const rows = (list: DeliverySums<string>[], waiting: Map<string, number>) => {
    const byKey = new Map(list.map((s) => [s.key, s]));
    const keys = new Set([...byKey.keys(), ...waiting.keys()]);
    return worstFirst([...keys].map((key) => ({ key, ...healthOf(byKey.get(key), waiting.get(key) ?? 0) })));
  };
  return {
    window,
    from: from.toISOString(),
    to: to.toISOString(),
    tenants: rows(sums.tenants, pending.tenants).map(({ key, ...h }) => ({ tenant_id: key, ...h })),
    hosts: rows(sums.hosts, pending.hosts).map(({ key, ...h }) => ({ host: key, ...h })),
  };
}

function healthOf(s: DeliverySums<string> | undefined, pending: number): HealthFields {
  const delivered = s?.delivered ?? 0;
  const failed = s?.failed ?? 0;
  return {
    delivered,
    failed,
    dead: s?.dead ?? 0,
    success_rate: delivered + failed === 0 ? null : delivered / (delivered + failed),
    p99_ms: s ? percentile(s.histogram, 0.99) : null,
    pending,
    last_error: s?.lastError ?? null,
    last_failure_at: s?.lastFailureAt?.toISOString() ?? null,
  };
}

/** Lowest success rate first (none: last), then most failed, then most dead, then most pending. */
export function worstFirst<T extends HealthFields>(rows: T[]): T[] {
  const rate = (r: T) => r.success_rate ?? Number.POSITIVE_INFINITY;
  return [...rows].sort((a, b) => rate(a) - rate(b) || b.failed - a.failed || b.dead - a.dead || b.pending - a.pending);
}

/* Rollup ------------------------------------------------------------------------------------------- */

/**
 * How far back each rollup rebuilds, besides what the watermark says is not final yet. An attempt is
 * written when it ends (at most CALLBACK_TIMEOUT_MS, 10 s by default, after its attempted_at) and
 * the attempt recorder's retries add seconds: three minutes covers both with room.
 */
export const ROLLUP_LOOKBACK_MINUTES = 3;

/** The writing side of the aggregates (db/delivery-stats-store.ts). */
export interface DeliveryRollupStore {
  /**
   * Rebuilds the minutes from max(the watermark, now - lookback), bounded by the retention, to now,
   * deletes aggregates older than the retention and moves the watermark, in one transaction under an
   * advisory lock. False when another instance held the lock (it is doing the same work).
   */
  rollUp(lookbackMinutes: number, retentionDays: number): Promise<boolean>;
}

/** Between rollups (service.ts schedules them): the current minute is at most that stale (plus a run's time). */
export const ROLLUP_INTERVAL_MS = 5_000;

/**
 * One rollup run; any instance may run it, the store's lock lets one at a time do the work. False
 * when another instance held the lock.
 */
export function rollUpDeliveries(store: DeliveryRollupStore): Promise<boolean> {
  return store.rollUp(ROLLUP_LOOKBACK_MINUTES, STATS_RETENTION_DAYS);
}
