import type { DeliveryStats, RegistrationStats } from '@payments/contracts';
import { ChartColors, type TimeChartProps } from '../views/charts';

/**
 * The dashboard's charts from the admin stats answers (endpoints D and E): one series per outcome,
 * bucket by bucket as the gateway answered them (every bucket present, oldest first).
 */
const WINDOW_WORDS = { hour: 'last hour', day: 'last day' } as const;

export function deliveriesChart(stats: DeliveryStats): TimeChartProps {
  return {
    id: `deliveries-${stats.window}`,
    title: `Deliveries per ${per(stats)}, ${WINDOW_WORDS[stats.window]}`,
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    emptyText: 'No delivery attempts in this window',
    series: [
      { key: 'delivered', label: 'delivered', color: ChartColors.good, values: stats.series.map((b) => b.delivered) },
      { key: 'failed', label: 'failed', color: ChartColors.failed, values: stats.series.map((b) => b.failed) },
      { key: 'dead', label: 'dead', color: ChartColors.dead, values: stats.series.map((b) => b.dead) },
    ],
  };
}

export function latencyChart(stats: DeliveryStats): TimeChartProps {
  return {
    id: `latency-${stats.window}`,
    title: `Delivery latency (p50, p99), ${WINDOW_WORDS[stats.window]}`,
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    unit: 'ms',
    emptyText: 'No delivery attempts in this window',
    series: [
      { key: 'p50', label: 'p50', color: ChartColors.p50, values: stats.series.map((b) => b.p50_ms) },
      { key: 'p99', label: 'p99', color: ChartColors.p99, values: stats.series.map((b) => b.p99_ms) },
    ],
  };
}

export function registrationsChart(stats: RegistrationStats): TimeChartProps {
  return {
    id: `registrations-${stats.window}`,
    title: `Registrations per ${per(stats)}, ${WINDOW_WORDS[stats.window]}`,
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    emptyText: 'No registrations in this window',
    series: [
      {
        key: 'registered',
        label: 'registered',
        color: ChartColors.good,
        values: stats.series.map((b) => b.registered),
      },
      { key: 'failed', label: 'failed', color: ChartColors.dead, values: stats.series.map((b) => b.failed) },
    ],
  };
}

function per(stats: { bucket_seconds: number }): string {
  return stats.bucket_seconds === 60 ? 'minute' : `${Math.round(stats.bucket_seconds / 60)} minutes`;
}
