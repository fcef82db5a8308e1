export { MetricNames, type MetricName } from './names';
export { createMetricsRegistry } from './registry';
export { countWork, workCounts, type WorkKind } from './work';
export { httpMetrics, metricsEndpoint, metricsHandler, METRICS_PATH, UNMATCHED_ROUTE } from './http';
export { outboxWaitingGauge } from './outbox';
export {
  jobStreamMetrics,
  outboxLimitGauges,
  NEAR_LIMIT_RATIO,
  type JobStreamsSource,
  type LimitWarnings,
  type OutboxSummary,
  type StreamFillSample,
} from './limits';
export { scrapedGauge, DEFAULT_SCRAPE_TTL_MS, type GaugeSample, type ScrapedGaugeOptions } from './scraped-gauge';
// Apps define their own counters and histograms with these, registered in their app's registry.
export { Counter, Gauge, Histogram, type Registry } from 'prom-client';
