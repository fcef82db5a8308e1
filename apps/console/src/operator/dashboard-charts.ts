import type { DeliveryStats, RegistrationStats } from '@payments/contracts';
import { ChartColors, type TimeChartProps } from '../views/charts';
import type { Formats } from '../views/locale';

/**
 * The dashboard's charts from the admin stats answers: one series per outcome, bucket by bucket as
 * the gateway answered them (every bucket present, oldest first). Two latencies: end to end (an
 * event's creation to its delivery, retries and queueing included: what a tenant waits) and the
 * receiver's answer time per attempt (what its server takes).
 */
type T = Pick<Formats, 't'>;

export function deliveriesChart(stats: DeliveryStats, { t }: T): TimeChartProps {
  return {
    id: `deliveries-${stats.window}`,
    title: t('operator.chart.deliveries', { per: per(stats, { t }), window: windowWords(stats, { t }) }),
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    emptyText: t('operator.chart.deliveriesEmpty'),
    series: [
      {
        key: 'delivered',
        label: t('operator.chart.delivered'),
        color: ChartColors.good,
        values: stats.series.map((b) => b.delivered),
      },
      {
        key: 'failed',
        label: t('operator.chart.failed'),
        color: ChartColors.failed,
        values: stats.series.map((b) => b.failed),
      },
      {
        key: 'dead',
        label: t('operator.chart.dead'),
        color: ChartColors.dead,
        values: stats.series.map((b) => b.dead),
      },
    ],
  };
}

/** Event created to delivered, p50 and p99 (null for buckets from a callback-svc without the figure). */
export function endToEndChart(stats: DeliveryStats, { t }: T): TimeChartProps {
  return {
    id: `end-to-end-${stats.window}`,
    title: t('operator.chart.endToEnd', { window: windowWords(stats, { t }) }),
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    unit: 'ms',
    emptyText: t('operator.chart.endToEndEmpty'),
    series: [
      {
        key: 'p50',
        label: 'p50',
        color: ChartColors.p50,
        values: stats.series.map((b) => b.end_to_end_p50_ms ?? null),
      },
      {
        key: 'p99',
        label: 'p99',
        color: ChartColors.p99,
        values: stats.series.map((b) => b.end_to_end_p99_ms ?? null),
      },
    ],
  };
}

/** How long receivers took to answer each attempt, p50 and p99. */
export function receiverTimeChart(stats: DeliveryStats, { t }: T): TimeChartProps {
  return {
    id: `latency-${stats.window}`,
    title: t('operator.chart.receiverTime', { window: windowWords(stats, { t }) }),
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    unit: 'ms',
    emptyText: t('operator.chart.deliveriesEmpty'),
    series: [
      { key: 'p50', label: 'p50', color: ChartColors.p50, values: stats.series.map((b) => b.p50_ms) },
      { key: 'p99', label: 'p99', color: ChartColors.p99, values: stats.series.map((b) => b.p99_ms) },
    ],
  };
}

export function registrationsChart(stats: RegistrationStats, { t }: T): TimeChartProps {
  return {
    id: `registrations-${stats.window}`,
    title: t('operator.chart.registrations', { per: per(stats, { t }), window: windowWords(stats, { t }) }),
    starts: stats.series.map((b) => b.at),
    bucketSeconds: stats.bucket_seconds,
    emptyText: t('operator.chart.registrationsEmpty'),
    series: [
      {
        key: 'registered',
        label: t('operator.chart.registered'),
        color: ChartColors.good,
        values: stats.series.map((b) => b.registered),
      },
      {
        key: 'failed',
        label: t('operator.chart.refused'),
        color: ChartColors.dead,
        values: stats.series.map((b) => b.failed),
      },
    ],
  };
}

function windowWords(stats: { window: 'hour' | 'day' }, { t }: T): string {
  return t(stats.window === 'hour' ? 'operator.chart.lastHour' : 'operator.chart.lastDay');
}

function per(stats: { bucket_seconds: number }, { t }: T): string {
  return stats.bucket_seconds === 60
    ? t('operator.chart.perMinute')
    : t('operator.chart.perMinutes', { n: Math.round(stats.bucket_seconds / 60) });
}
