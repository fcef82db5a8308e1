import type { Gauge, Registry } from 'prom-client';
import { MetricNames } from './names';
import { scrapedGauge } from './scraped-gauge';

/**
 * outbox_messages_waiting{stream}: rows a service's outbox relay has not published yet. Streams
 * the relay serves show 0 when nothing waits, so a dashboard sees the series before the first backlog.
 */
export function outboxWaitingGauge(
  registry: Registry,
  options: {
    streams: readonly string[];
    backlog: () => Promise<Array<{ stream: string; waiting: number }>>;
    onError?: (err: unknown) => void;
  },
): Gauge<'stream'> {
  return scrapedGauge(registry, {
    name: MetricNames.outboxWaiting,
    help: 'Outbox rows not yet published to JetStream, by stream',
    labelNames: ['stream'],
    read: async () => {
      const waiting = new Map<string, number>(options.streams.map((s) => [s, 0]));
      for (const b of await options.backlog()) waiting.set(b.stream, b.waiting);
      return [...waiting].map(([stream, value]) => ({ labels: { stream }, value }));
    },
    onError: options.onError,
  });
}
