import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countWork, createMetricsRegistry, MetricNames, workCounts } from '../src';

/** A counter's value in Prometheus text, for the series of `service`. */
function value(text: string, name: string, service: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{service="${service}"} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

let server: Server;
let url: string;
let served = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    served += 1;
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it('shows the counts the libs add, from 0, in every registry of the process', async () => {
  const registry = createMetricsRegistry('work-a');
  const before = workCounts();
  countWork('dbStatements', 3);
  countWork('dbCommits');
  countWork('busRequests', 2);
  countWork('busPublishes', 5);
  const text = await registry.metrics();
  expect(value(text, MetricNames.dbStatements, 'work-a')).toBe(before.dbStatements + 3);
  expect(value(text, MetricNames.dbCommits, 'work-a')).toBe(before.dbCommits + 1);
  expect(value(text, MetricNames.busRequests, 'work-a')).toBe(before.busRequests + 2);
  expect(value(text, MetricNames.busPublishes, 'work-a')).toBe(before.busPublishes + 5);
  // A second app's registry in the same process shows the same process-wide totals.
  const other = await createMetricsRegistry('work-b').metrics();
  expect(value(other, MetricNames.busPublishes, 'work-b')).toBe(before.busPublishes + 5);
});

it('counts outgoing HTTP requests made with fetch and with node:http', async () => {
  const registry = createMetricsRegistry('work-http');
  const before = workCounts().httpClientRequests;
  served = 0;
  await (await fetch(url)).text();
  await (await fetch(url)).text();
  await new Promise<void>((resolve, reject) =>
    request(url, (res) => res.resume().on('end', resolve))
      .on('error', reject)
      .end(),
  );
  expect(served).toBe(3);
  expect(value(await registry.metrics(), MetricNames.httpClientRequests, 'work-http')).toBe(before + 3);
});
