import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common';
import { statsSeriesSchema, StatsWindowSchema, type StatsWindow } from './stats';

/**
 * The admin API's delivery statistics: GET /admin/v1/stats/deliveries (a series of buckets)
 * and GET /admin/v1/delivery-health (per tenant and per receiving host). callback-svc answers them
 * from its per-minute aggregates; the gateway adds the tenants' names. Windows and buckets: ./stats.
 */

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const NullableMs = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description });
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });

/** One bucket of GET /admin/v1/stats/deliveries. */
export const DeliveryStatsBucketSchema = Type.Object(
  {
    at: Timestamp('Start of the bucket'),
    delivered: Count('Attempts answered 2xx'),
    failed: Count('Attempts that did not succeed: non-2xx, timeout, network error'),
    dead: Count('Events given up (moved to dead)'),
    p50_ms: NullableMs('Median attempt duration; null with no attempts'),
    p99_ms: NullableMs('99th percentile of attempt durations; null with no attempts'),
    end_to_end_p50_ms: Type.Optional(
      NullableMs(
        'Median time from an event’s creation to the end of the attempt that delivered it (retries and queueing included), over the deliveries in the bucket; null with none. Absent from a callback-svc older than this field.',
      ),
    ),
    end_to_end_p99_ms: Type.Optional(
      NullableMs('99th percentile of the same end-to-end latency; null with no deliveries.'),
    ),
  },
  { $id: 'DeliveryStatsBucket' },
);
export type DeliveryStatsBucket = Static<typeof DeliveryStatsBucketSchema>;

/** GET /admin/v1/stats/deliveries: every bucket of the window (zeros included), oldest first. */
export const DeliveryStatsSchema = statsSeriesSchema(DeliveryStatsBucketSchema, 'DeliveryStats');
export type DeliveryStats = Static<typeof DeliveryStatsSchema>;

const healthFields = {
  delivered: Count('Attempts answered 2xx in the window'),
  failed: Count('Attempts that did not succeed in the window'),
  dead: Count('Events given up in the window'),
  success_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'delivered / (delivered + failed); null with no attempts',
  }),
  p99_ms: NullableMs('99th percentile of attempt durations in the window; null with no attempts'),
  pending: Count('Events pending now'),
  last_error: Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
    description:
      "The last failed attempt's error and the start of the receiver's answer, at most 200 characters; receiver-controlled text: show it escaped",
  }),
  last_failure_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the last failed attempt in the window was made',
  }),
};

export const TenantDeliveryHealthSchema = Type.Object(
  { tenant_id: Uuid(), tenant_name: Type.String(), ...healthFields },
  { $id: 'TenantDeliveryHealth' },
);
export type TenantDeliveryHealth = Static<typeof TenantDeliveryHealthSchema>;

export const HostDeliveryHealthSchema = Type.Object(
  { host: Type.String({ description: "The callback URL's host" }), ...healthFields },
  { $id: 'HostDeliveryHealth' },
);
export type HostDeliveryHealth = Static<typeof HostDeliveryHealthSchema>;

/** GET /admin/v1/delivery-health: tenants and hosts, worst first (lowest success_rate, then most failed). */
export const DeliveryHealthSchema = Type.Object(
  {
    window: StatsWindowSchema,
    from: Timestamp('Start of the window'),
    to: Timestamp('End of the window'),
    tenants: Type.Array(TenantDeliveryHealthSchema),
    hosts: Type.Array(HostDeliveryHealthSchema),
  },
  { $id: 'DeliveryHealth' },
);
export type DeliveryHealth = Static<typeof DeliveryHealthSchema>;

/** Bus commands (gateway -> callback-svc) and replies. */
export interface DeliveryStatsCommand {
  window: StatsWindow;
  /** Only this tenant's deliveries; all tenants when absent. */
  tenant_id?: string;
}
export type DeliveryStatsReply = DeliveryStats;

export interface DeliveryHealthCommand {
  window: StatsWindow;
}
/** The answer without tenant names: the gateway joins them from its tenants table. */
export interface DeliveryHealthReply {
  window: StatsWindow;
  from: string;
  to: string;
  tenants: Array<Omit<TenantDeliveryHealth, 'tenant_name'>>;
  hosts: HostDeliveryHealth[];
}
