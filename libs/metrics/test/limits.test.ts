import { createMetricsRegistry, jobStreamMetrics, MetricNames, outboxLimitGauges } from '../src';

/** The series of `name` in Prometheus text, by their label text (`stream="x"`, or '' without labels). */
function series(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = (m[2] ?? '').replace(/,?service="[^"]*"/, '').replace(/^,/, '');
    found.set(labels, Number(m[3]));
  }
  return found;
}

function warnings() {
  const seen: Array<{ details: object; message: string }> = [];
  return { seen, logger: { warn: (details: object, message: string) => seen.push({ details, message }) } };
}

it('counts dead letters by stream from 0, and shows each stream fill, warning above 80%', async () => {
  const registry = createMetricsRegistry('test-svc');
  let listener: ((stream: string) => void) | undefined;
  const asked: string[][] = [];
  const { seen, logger } = warnings();
  jobStreamMetrics(registry, {
    source: {
      onDeadLetter: (l) => (listener = l),
      fill: async (streams) => {
        asked.push(streams.map((s) => s.name));
        return [
          { stream: 'registrations', ratio: 0.25, bytes: 256, maxBytes: 1024 },
          { stream: 'dead_letters', ratio: 0.85, bytes: 870, maxBytes: 1024 },
        ];
      },
    },
    streams: [{ name: 'registrations' }],
    consumed: ['registrations', 'cancellations'],
    logger,
  });
  listener!('registrations');
  listener!('registrations');

  const text = await registry.metrics();
  expect(series(text, MetricNames.jobsDeadLettered)).toEqual(
    new Map([
      ['stream="registrations"', 2],
      ['stream="cancellations"', 0],
    ]),
  );
  expect(series(text, MetricNames.streamFillRatio)).toEqual(
    new Map([
      ['stream="registrations"', 0.25],
      ['stream="dead_letters"', 0.85],
    ]),
  );
  expect(asked).toEqual([['registrations']]);
  expect(seen).toEqual([
    {
      details: { stream: 'dead_letters', ratio: 0.85, bytes: 870, maxBytes: 1024 },
      message: expect.stringContaining('above 80% of STREAM_MAX_BYTES'),
    },
  ]);
});

it('shows the outbox against OUTBOX_MAX_ROWS from one read per scrape', async () => {
  const registry = createMetricsRegistry('test-svc');
  let reads = 0;
  outboxLimitGauges(registry, {
    maxRows: 200,
    summary: async () => {
      reads += 1;
      return { rows: 50, failing: 2, oldestAgeSeconds: 12.5 };
    },
    logger: warnings().logger,
  });
  const text = await registry.metrics();
  expect(series(text, MetricNames.outboxRows).get('')).toBe(50);
  expect(series(text, MetricNames.outboxFailingRows).get('')).toBe(2);
  expect(series(text, MetricNames.outboxOldestAge).get('')).toBe(12.5);
  expect(series(text, MetricNames.outboxFillRatio).get('')).toBe(0.25);
  expect(reads).toBe(1);
});
