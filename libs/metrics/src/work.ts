import { subscribe } from 'node:diagnostics_channel';
import { Counter, type Registry } from 'prom-client';
import { MetricNames } from './names';

/** The kinds of round trip and commit a process counts, whichever lib makes them. */
export type WorkKind =
  | 'dbStatements'
  | 'dbCommits'
  | 'busRequests'
  | 'busRequestSeconds'
  | 'busServed'
  | 'busServeSeconds'
  | 'busPublishes'
  | 'busClaimsRefused'
  | 'httpClientRequests';

const HELP: Record<WorkKind, string> = {
  dbStatements: 'Postgres statements sent by this process (one round trip each), BEGIN and COMMIT included',
  dbCommits: 'Postgres commits asked for by this process: each COMMIT, and each statement outside a transaction',
  busRequests: 'Bus requests (request-reply) sent by this process',
  busRequestSeconds: "Seconds this process's bus requests waited for their replies, summed",
  busServed: 'Bus requests served (answered or refused) by this process',
  busServeSeconds: "Seconds from a served bus request's arrival to its reply, summed",
  busPublishes: 'Messages published to JetStream by this process',
  busClaimsRefused:
    'Claim-checked bus bodies this process refused: the object missing, or not matching the digest its message carries',
  httpClientRequests: 'Outgoing HTTP requests started by this process (fetch, undici, node:http)',
};

/**
 * Plain numbers, one per process: the libs that do the work (libs/db, libs/bus) add to them on their
 * hot paths, where a prom-client call per statement would cost more than the count is worth. Every
 * registry of the process shows the same totals, read when /metrics is scraped.
 */
const tally: Record<WorkKind, number> = {
  dbStatements: 0,
  dbCommits: 0,
  busRequests: 0,
  busRequestSeconds: 0,
  busServed: 0,
  busServeSeconds: 0,
  busPublishes: 0,
  busClaimsRefused: 0,
  httpClientRequests: 0,
};

/** Adds `n` round trips (or commits, or seconds) of one kind to this process's count. */
export function countWork(kind: WorkKind, n = 1): void {
  tally[kind] += n;
}

/** This process's counts so far. */
export function workCounts(): Readonly<Record<WorkKind, number>> {
  return { ...tally };
}

let watchingHttp = false;

/**
 * Outgoing HTTP is counted from Node's diagnostics channels: undici (and so fetch) and node:http
 * announce every request there, so no client needs wrapping.
 */
function watchOutgoingHttp(): void {
  if (watchingHttp) return;
  watchingHttp = true;
  const count = () => countWork('httpClientRequests');
  subscribe('undici:request:create', count);
  subscribe('http.client.request.start', count);
}

/** Registers the process's work counters (db_statements_total, bus_publishes_total, ...) in `registry`. */
export function workCounters(registry: Registry): void {
  watchOutgoingHttp();
  for (const kind of Object.keys(HELP) as WorkKind[]) {
    new Counter({
      name: MetricNames[kind],
      help: HELP[kind],
      registers: [registry],
      collect() {
        this.reset();
        this.inc(tally[kind]);
      },
    });
  }
}
