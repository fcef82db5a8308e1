import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FieldError } from './errors';
import { isUuid } from './common';
import type { ValidationResult } from './validation';

/**
 * The console's statistics: time series over a window of fixed buckets, every bucket
 * present (zeros included), oldest first, the last bucket holding now. The owning services keep
 * per-minute aggregates 8 days; the gateway asks them over the bus.
 */
export const StatsWindows = {
  hour: { bucketSeconds: 60, buckets: 60 },
  day: { bucketSeconds: 900, buckets: 96 },
} as const;
export type StatsWindow = keyof typeof StatsWindows;
export const STATS_WINDOW_NAMES = Object.keys(StatsWindows) as StatsWindow[];

/** How long the per-minute aggregates are kept. */
export const STATS_RETENTION_DAYS = 8;

/** The buckets of `window` at `now`: `from` is the first one's start, `to` the last one's end (after now). */
export function statsBuckets(
  window: StatsWindow,
  now: Date,
): { from: Date; to: Date; bucketSeconds: number; starts: Date[] } {
  const { bucketSeconds, buckets } = StatsWindows[window];
  const size = bucketSeconds * 1000;
  const to = Math.floor(now.getTime() / size) * size + size;
  const from = to - buckets * size;
  const starts = Array.from({ length: buckets }, (_, i) => new Date(from + i * size));
  return { from: new Date(from), to: new Date(to), bucketSeconds, starts };
}

/** `?window=hour|day[&tenant_id=<uuid>]` of the stats endpoints. */
export interface StatsQuery {
  window: StatsWindow;
  tenant_id?: string;
}

/**
 * A stats query string checked, each bad parameter named (`in: 'query'`). `window` defaults to hour;
 * a parameter given twice is refused; the tenant id comes back in lower case.
 */
export function parseStatsQuery(query: Record<string, string | string[] | undefined>): ValidationResult<StatsQuery> {
  const errors: FieldError[] = [];
  const one = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) {
      errors.push({ in: 'query', path: name, message: 'may be given once' });
      return undefined;
    }
    return value;
  };
  const window = one('window');
  const tenantId = one('tenant_id');
  if (window !== undefined && !STATS_WINDOW_NAMES.includes(window as StatsWindow))
    errors.push({ in: 'query', path: 'window', message: `must be one of ${STATS_WINDOW_NAMES.join(', ')}` });
  if (tenantId !== undefined && !isUuid(tenantId))
    errors.push({ in: 'query', path: 'tenant_id', message: 'must be a UUID' });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      window: (window as StatsWindow | undefined) ?? 'hour',
      ...(tenantId === undefined ? {} : { tenant_id: tenantId.toLowerCase() }),
    },
  };
}

export const StatsWindowSchema = Type.Union(
  STATS_WINDOW_NAMES.map((w) => Type.Literal(w)),
  { description: 'hour: 60 buckets of 60 s; day: 96 buckets of 900 s' },
);

/** A stats answer: the window, its buckets' size and span, and every bucket (of `bucket`'s shape), oldest first. */
export function statsSeriesSchema<B extends TSchema>(bucket: B, $id: string) {
  return Type.Object(
    {
      window: StatsWindowSchema,
      bucket_seconds: Type.Integer({ minimum: 1, description: '60 (hour) or 900 (day)' }),
      from: Type.String({ format: 'date-time', description: 'The first bucket’s start' }),
      to: Type.String({ format: 'date-time', description: 'The last bucket’s end (the last bucket holds now)' }),
      series: Type.Array(bucket, { description: 'Every bucket, oldest first' }),
    },
    { $id },
  );
}
const Count = (description: string) => Type.Integer({ minimum: 0, description });

/* Registrations (receivables-svc) ------------------------------------------------------------------ */

export const RegistrationStatsBucketSchema = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'The bucket’s start, ISO 8601' }),
    registered: Count('Charges registered with the provider in the bucket'),
    failed: Count('Charges whose registration failed for good (the provider refused them: state rejected)'),
  },
  { $id: 'RegistrationStatsBucket' },
);
export type RegistrationStatsBucket = Static<typeof RegistrationStatsBucketSchema>;

/** 200 of GET /admin/v1/stats/registrations. */
export const RegistrationStatsSchema = statsSeriesSchema(RegistrationStatsBucketSchema, 'RegistrationStats');
export type RegistrationStats = Static<typeof RegistrationStatsSchema>;

/** gateway -> receivables-svc: a tenant's registrations (or everyone's without tenant_id). */
export interface RegistrationStatsCommand {
  window: StatsWindow;
  tenant_id?: string;
}
