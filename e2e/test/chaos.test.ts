import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import pg from 'pg';
import { natsServers } from '@payments/bus';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { startNatsCluster, type NatsCluster } from '@payments/test-support/nats-cluster';
import { Fleet, planPorts, type AppInstance } from '@payments/test-support/instances';
import {
  authenticate,
  CallbackTally,
  createClient,
  postCharges,
  rateLimitExcess,
  type Posting,
} from '@payments/test-support/charge-load';
import { PrivatePostgres } from '../support/private-postgres';
import { killLeftovers } from '../support/launcher';

/**
 * Scale-out under chaos: 2 instances of every service, each its own process, on a private
 * 3-node NATS cluster with R3 streams and a private Postgres. Once a quarter of the charges have their
 * registered callback, the first run kill -9s one instance of each worker service and the NATS node
 * leading the registration stream, the second restarts Postgres; both restart what they stopped and
 * check that every charge was registered once, with one registered callback, and the rate limit held
 * across both gateways.
 */

const RATE_PER_SECOND = 300;
const RATE_BURST = 400;
// Batches of half the burst, 4 at once: one bucket per gateway would let twice the burst through.
const BATCH = 200;
const CONCURRENT_POSTS = 4;

const prefix = `chaos${randomBytes(4).toString('hex')}`;
let cluster: NatsCluster | undefined;
let postgres: PrivatePostgres | undefined;
let fleet: Fleet | undefined;
let nc: NatsConnection | undefined;
let databaseUrl = '';
let gateways: string[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
  postgres = await PrivatePostgres.create();
  databaseUrl = postgres.url('chaos');
  const plan = await planPorts({
    'bank-sandbox': 1,
    'clients-svc': 2,
    'receivables-svc': 2,
    'callback-svc': 2,
    'booklet-svc': 2,
    gateway: 2,
  });
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    // 11 instances share the private server's 100 connections.
    DATABASE_POOL_SIZE: '6',
    NATS_URL: cluster.url,
    STREAM_REPLICAS: '3',
    BUS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    BANK_SANDBOX_PORT: String(plan['bank-sandbox']![0]),
    PROVIDER_BASE_URL: `http://127.0.0.1:${plan['bank-sandbox']![0]}`,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${plan['receivables-svc']![1]}/provider/webhooks/bank-sandbox`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${plan.gateway![0]}`,
    RATE_LIMIT_PER_SECOND: String(RATE_PER_SECOND),
    RATE_LIMIT_BURST: String(RATE_BURST),
  };
  const startedAt = Date.now();
  fleet = await Fleet.start(env, plan);
  console.log(
    `chaos: 11 instances ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s` +
      (fleet.failedStarts.length ? `; start-ups tried again: ${fleet.failedStarts.join('; ')}` : ''),
  );
  gateways = fleet.of('gateway').map((g) => g.url);
  nc = await connect({ servers: natsServers(cluster.url) });
}, 180_000);

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await fleet?.killAll();
  killLeftovers(`BUS_PREFIX=${prefix}`, []);
  await cluster?.close();
  await postgres?.destroy();
}, 60_000);

/** The node leading the registration stream (stream info's cluster.leader). */
async function registrationLeader(): Promise<string> {
  const jsm = await nc!.jetstreamManager();
  const leader = (await jsm.streams.info(`${prefix}_registrations`)).cluster?.leader;
  if (!leader) throw new Error('the registration stream has no leader');
  return leader;
}

interface Run {
  tally: CallbackTally;
  posting: Posting;
  tenantId: string;
  /** When the disruption began. */
  disruptedAt: number;
  /** When what was stopped was back (disrupt() returned): Postgres answering again, instances restarted. */
  restoredAt: number;
}

/** Posts `total` charges for a new tenant through both gateways and disrupts once a quarter have their callback. */
async function runWith(total: number, disrupt: () => Promise<void>): Promise<Run> {
  const admin = await openAdminDatabase(databaseUrl);
  const tenant = await createTenant(admin, 'Chaos').finally(() => admin.destroy());
  const accessToken = await authenticate(gateways[0], tenant.integration_token);
  const clientId = await createClient(gateways[1], accessToken);
  const tally = await new CallbackTally().start();
  const stop = new AbortController();
  const posting = postCharges({
    gateways,
    accessToken,
    clientId,
    callbackUrl: tally.url,
    total,
    batchSize: BATCH,
    concurrency: CONCURRENT_POSTS,
    signal: stop.signal,
  });
  // Failing before `await posting` below must not leave it unhandled (or posting on).
  posting.catch(() => undefined);
  try {
    await tally.waitForRegistered(total / 4, 90_000);
    const disruptedAt = Date.now();
    await disrupt();
    const restoredAt = Date.now();
    const posted = await posting;
    await tally.waitForRegistered(total, 150_000).catch((err: Error) => {
      const tails = fleet!.instances.map((x) => `${x.name}:\n  ${x.tail().join('\n  ')}`);
      throw new Error(`${err.message}; the instances' last log lines:\n${tails.join('\n')}`);
    });
    // Room for a late second event of a charge, or a re-sent delivery, to show up.
    await new Promise((r) => setTimeout(r, 3_000));
    return { tally, posting: posted, tenantId: tenant.tenant_id, disruptedAt, restoredAt };
  } finally {
    stop.abort();
    await posting.catch(() => undefined);
    await tally.stop();
  }
}

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Seconds from the end of the disruption (what was stopped is back) to the last callback request. */
function secondsFromRestoreToLastCallback(run: Run): number {
  return (run.tally.lastArrival - run.restoredAt) / 1000;
}

/** The checks both runs share, and the figures they print. */
async function expectEachChargeOnce(run: Run, total: number, what: string): Promise<void> {
  const { tally, posting } = run;
  const lastAfter = (tally.lastArrival - run.disruptedAt) / 1000;
  console.log(
    `chaos (${what}): ${total} charges, ${tally.events.size} distinct events, ${tally.resent} re-sent deliveries ` +
      `(${tally.requests} requests), last callback ${lastAfter.toFixed(1)} s after the disruption ` +
      `(${secondsFromRestoreToLastCallback(run).toFixed(1)} s after the restart, which took ` +
      `${((run.restoredAt - run.disruptedAt) / 1000).toFixed(1)} s), longest stall ` +
      `${(tally.longestStallAfter(run.disruptedAt) / 1000).toFixed(1)} s; rate limit: ${posting.limited} answers 429, ` +
      `${posting.unavailable} 503 or no answer, accepted by gateway ` +
      gateways.map((g) => posting.accepted.filter((a) => a.gateway === g).reduce((n, a) => n + a.size, 0)).join(' / '),
  );

  // One distinct registered callback per charge, by accounts_receivable_id and by webhook-id.
  expect(tally.unexpected).toEqual([]);
  expect(tally.registered.size).toBe(total);
  expect([...tally.registered.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  expect(tally.events.size).toBe(total);
  expect(new Set(posting.ids).size).toBe(total);
  expect(posting.ids.filter((id) => !tally.registered.has(id))).toEqual([]);

  // Every charge registered once at the provider (keyed by the receivable's id), none left pending.
  const [state] = await query<{ receivables: string; registered: string; at_provider: string; keys: string }>(
    `select count(*) as receivables,
            count(*) filter (where r.registration_status = 'registered' and r.provider_charge_id is not null) as registered,
            count(c.charge_id) as at_provider,
            count(distinct c.idempotency_key) as keys
       from receivables.receivables r
       left join bank_sandbox.charges c on c.idempotency_key = r.id::text
      where r.tenant_id = $1`,
    [run.tenantId],
  );
  expect(Object.values(state).map(Number)).toEqual([total, total, total, total]);
  const [orphans] = await query<{ n: string }>(
    `select count(*) as n from bank_sandbox.charges c
      where not exists (select 1 from receivables.receivables r where r.id::text = c.idempotency_key)`,
    [],
  );
  expect(Number(orphans.n)).toBe(0);

  // The limit held across both gateways, and was reached (else the check proves nothing).
  expect(posting.limited).toBeGreaterThan(0);
  expect(rateLimitExcess(posting, RATE_PER_SECOND, RATE_BURST)).toBeLessThanOrEqual(0);
}

it('registers every charge once, with one callback each, across kill -9 of a worker of each kind and the registration stream leader', async () => {
  const total = 3_000;
  const run = await runWith(total, async () => {
    const leader = await registrationLeader();
    const victims: AppInstance[] = [
      fleet!.instance('receivables-svc', 0),
      fleet!.instance('callback-svc', 0),
      fleet!.instance('booklet-svc', 0),
    ];
    await Promise.all([...victims.map((v) => v.kill()), cluster!.stop(leader)]);
    await Promise.all([...victims.map((v) => v.start()), cluster!.start(leader)]);
    console.log(`chaos: killed ${victims.map((v) => v.name).join(', ')} and NATS node ${leader}, restarted`);
  });
  await expectEachChargeOnce(run, total, 'kill -9');
  expect(fleet!.crashes).toEqual([]);
}, 240_000);

it('registers every charge once, with one callback each, across a restart of Postgres', async () => {
  const total = 2_000;
  const run = await runWith(total, async () => {
    await postgres!.stop();
    await postgres!.start();
  });
  await expectEachChargeOnce(run, total, 'Postgres restart');
  // Events whose bookkeeping failed while Postgres was away go out again within seconds of it answering,
  // not when their row lease (CALLBACK_TIMEOUT_MS + 50 s) ends; the rest is the posting's own tail.
  expect(secondsFromRestoreToLastCallback(run)).toBeLessThan(30);
  // No instance may crash on it (it did before libs/db listened for errors on checked-out clients).
  expect(fleet!.crashes).toEqual([]);
}, 240_000);
