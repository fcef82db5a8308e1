import { Counter, type Registry } from 'prom-client';
import { MetricNames } from './names';
import { DEFAULT_SCRAPE_TTL_MS, scrapedGauge } from './scraped-gauge';

/** Above this share of a limit, a gauge's read logs a warning. */
export const NEAR_LIMIT_RATIO = 0.8;

/** One stream's fill: bytes against max_bytes (ratio 0..1). */
export interface StreamFillSample {
  stream: string;
  ratio: number;
  bytes: number;
  maxBytes: number;
}

/** What the job metrics read from the bus: libs/bus's DurableStreams (`bus.streams`), without depending on it. */
export interface JobStreamsSource {
  /** Called with the stream's name (StreamSpec.name) of each dead-lettered message. */
  onDeadLetter(listener: (stream: string) => void): void;
  /** The fill of these streams and of the dead-letter stream. */
  fill(streams: ReadonlyArray<{ name: string }>): Promise<StreamFillSample[]>;
}

/** Where a near-limit warning goes (the service's logger). */
export interface LimitWarnings {
  warn(details: object, message: string): void;
}

/**
 * jobs_dead_lettered_total{stream} (shown at 0 for `consumed` from the start, so an alert on its
 * increase needs no first event) and jetstream_stream_fill_ratio{stream}, read at scrape time; a
 * stream above 80% of STREAM_MAX_BYTES is logged as a warning when read.
 */
export function jobStreamMetrics(
  registry: Registry,
  options: {
    source: JobStreamsSource;
    /** The streams this service writes or reads (their fill is shown, with the dead letters'). */
    streams: ReadonlyArray<{ name: string }>;
    /** The streams this service works off (StreamSpec.name): their dead-letter counts show from 0. */
    consumed: readonly string[];
    logger: LimitWarnings;
  },
): void {
  const deadLettered = new Counter({
    name: MetricNames.jobsDeadLettered,
    help: 'Job messages moved to the dead-letter stream (handler failed JOB_MAX_FAILURES times, or poison), by stream',
    labelNames: ['stream'],
    registers: [registry],
  });
  for (const stream of options.consumed) deadLettered.inc({ stream }, 0);
  options.source.onDeadLetter((stream) => deadLettered.inc({ stream }));
  scrapedGauge(registry, {
    name: MetricNames.streamFillRatio,
    help: 'How full each JetStream stream is: bytes over its max_bytes (STREAM_MAX_BYTES), 0..1',
    labelNames: ['stream'],
    read: async () => {
      const fills = await options.source.fill(options.streams);
      for (const f of fills)
        if (f.ratio >= NEAR_LIMIT_RATIO)
          options.logger.warn(f, 'stream above 80% of STREAM_MAX_BYTES: publishes will be refused when it is full');
      return fills.map((f) => ({ labels: { stream: f.stream }, value: f.ratio }));
    },
    onError: (err) => options.logger.warn({ err }, 'could not read the streams for /metrics'),
  });
}

/** What the outbox gauges read (libs/outbox's outboxBacklogSummary). */
export interface OutboxSummary {
  rows: number;
  failing: number;
  oldestAgeSeconds: number;
}

/**
 * The outbox against its limit (OUTBOX_MAX_ROWS): outbox_rows, outbox_failing_rows,
 * outbox_oldest_age_seconds and outbox_fill_ratio, from one cached read per scrape period.
 */
export function outboxLimitGauges(
  registry: Registry,
  options: { maxRows: number; summary: () => Promise<OutboxSummary>; logger: LimitWarnings },
): void {
  const read = sharedRead(options.summary);
  const gauge = (name: string, help: string, value: (s: OutboxSummary) => number) =>
    scrapedGauge(registry, {
      name,
      help,
      read: async () => [{ labels: {}, value: value(await read()) }],
      onError: (err) => options.logger.warn({ err }, 'could not read the outbox for /metrics'),
    });
  gauge(MetricNames.outboxRows, 'Outbox rows not yet published, all streams', (s) => s.rows);
  gauge(
    MetricNames.outboxFailingRows,
    'Outbox rows whose last publish failed (they wait for a retry)',
    (s) => s.failing,
  );
  gauge(MetricNames.outboxOldestAge, 'Age of the oldest outbox row, seconds (0 when empty)', (s) => s.oldestAgeSeconds);
  gauge(MetricNames.outboxFillRatio, 'Outbox rows over OUTBOX_MAX_ROWS', (s) => s.rows / options.maxRows);
}

/** One read shared by the gauges of one scrape (they are collected one after another). */
function sharedRead<T>(read: () => Promise<T>, ttlMs = DEFAULT_SCRAPE_TTL_MS): () => Promise<T> {
  let cached: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at >= ttlMs) {
      const value = read();
      cached = { at: Date.now(), value };
      value.catch(() => (cached = undefined));
    }
    return cached.value;
  };
}
