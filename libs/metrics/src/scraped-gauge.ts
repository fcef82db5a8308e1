import { Gauge, type Registry } from 'prom-client';

export interface GaugeSample<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

export interface ScrapedGaugeOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** Reads the current values (typically one grouped count in Postgres). */
  read: () => Promise<Array<GaugeSample<L>>>;
  /** How long a read (or a failed one) is reused: however often Prometheus scrapes, Postgres sees at most one query per period. */
  ttlMs?: number;
  /** Told when a read fails (the gauge then shows no series rather than stale numbers). */
  onError?: (err: unknown) => void;
}

export const DEFAULT_SCRAPE_TTL_MS = 5_000;

/**
 * A gauge computed when /metrics is scraped, from a cached read: nothing has to keep it up to date,
 * and scraping cannot hammer the database. Concurrent scrapes share one read.
 */
export function scrapedGauge<L extends string>(registry: Registry, options: ScrapedGaugeOptions<L>): Gauge<L> {
  const ttlMs = options.ttlMs ?? DEFAULT_SCRAPE_TTL_MS;
  let cached: { at: number; samples: Array<GaugeSample<L>> | undefined } | undefined;
  let reading: Promise<Array<GaugeSample<L>> | undefined> | undefined;

  const current = (): Promise<Array<GaugeSample<L>> | undefined> => {
    if (cached && Date.now() - cached.at < ttlMs) return Promise.resolve(cached.samples);
    reading ??= options
      .read()
      .catch((err: unknown) => {
        options.onError?.(err);
        return undefined;
      })
      .then((samples) => {
        cached = { at: Date.now(), samples };
        return samples;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  return new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      const samples = await current();
      this.reset();
      for (const s of samples ?? []) this.set(s.labels, s.value);
    },
  });
}
