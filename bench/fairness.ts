/**
 * bench/fairness: one tenant's backlog must not delay another tenant's small batches.
 * Tenant A posts 20,000 charges (20 POSTs of 1,000, two at a time) through the gateway while tenant B
 * (its own receiver, another port) posts 10 batches of 10, one every 500 ms, as an ERP on a timer does:
 * once starting with A's first POST (B's batches meet A's intake and A's registrations), and once
 * starting when A's 20,000 are accepted (they meet A's registrations and callbacks draining).
 * Measured per charge: POST to registered callback, and where that time went (stages, from the
 * services' own tables). Baseline in the same run: B's batches with nothing else queued. The scenario
 * runs BENCH_RUNS times against the same system; every run's figures are printed, then the worst.
 * Target: B's p99 under 2 s in every run. Every app runs as its own process, as `npm start` runs
 * them, with the rate limit at its defaults (5,000 charges a second, bursts of 5,000): A sends a POST
 * answered 429 again after its Retry-After, as an ERP would.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { createTestDatabase } from '@payments/db';
import {
  benchTenant,
  CountingReceiver,
  deleteStreams,
  developmentUnlessSet,
  fmt,
  freePort,
  percentile,
  randomPrefix,
  runBench,
  startApp,
  stopApps,
  systemEnv,
} from './support';
import { chargeItem } from '@payments/test-support/charge-load';

const A_TOTAL = Number(process.env.BENCH_CHARGES ?? 20_000);
const A_BATCH = 1_000;
const A_CONCURRENT_POSTS = 2;
const B_BATCHES = 10;
const B_BATCH = 10;
/**
 * B sends a batch every BENCH_B_GAP_MS (start to start, whether the previous one was answered or
 * not), as an ERP on a timer does; 0 sends each once the previous one was accepted.
 */
const B_GAP_MS = Number(process.env.BENCH_B_GAP_MS ?? 500);
/** The scenario's repetitions in one bench run (the same system, A's backlog anew each time). */
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TARGET_P99_MS = 2_000;

interface Tenant {
  name: string;
  tenantId: string;
  api: string;
  headers: Record<string, string>;
  clientId: string;
  receiver: CountingReceiver;
  /** When the POST carrying each charge (account_receivable_id) was sent. */
  postedAt: Map<string, number>;
  /** When that POST was answered 202. */
  acceptedAt: Map<string, number>;
  /** POSTs answered 429 (and sent again after their Retry-After). */
  rateLimited: number;
}

async function setUpTenant(name: string, api: string, databaseUrl: string): Promise<Tenant> {
  const { tenantId, headers, clientId } = await benchTenant(api, databaseUrl, name);
  const receiver = await new CountingReceiver().start();
  return {
    name,
    tenantId,
    api,
    headers,
    clientId,
    receiver,
    postedAt: new Map(),
    acceptedAt: new Map(),
    rateLimited: 0,
  };
}

function itemFor(tenant: Tenant, i: number) {
  return chargeItem(tenant.clientId, tenant.receiver.url, i);
}

/** Posts one batch of `size` charges; resolves with their ids once it is accepted (202). */
async function post(tenant: Tenant, size: number): Promise<string[]> {
  const batch = Array.from({ length: size }, (_, i) => itemFor(tenant, i));
  const body = JSON.stringify(batch);
  const key = randomUUID();
  let sentAt = Date.now();
  let res = await send(tenant, body, key);
  // As an ERP does: a 429 is sent again after its Retry-After (the charge's clock starts at the send that is taken).
  while (res.status === 429) {
    tenant.rateLimited += 1;
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
    sentAt = Date.now();
    res = await send(tenant, body, key);
  }
  if (res.status !== 202) throw new Error(`${tenant.name}: POST answered ${res.status}: ${await res.text()}`);
  const ids = batch.map((item) => item.account_receivable_id);
  const acceptedAt = Date.now();
  for (const id of ids) {
    tenant.postedAt.set(id, sentAt);
    tenant.acceptedAt.set(id, acceptedAt);
  }
  return ids;
}

function send(tenant: Tenant, body: string, key: string): Promise<Response> {
  return fetch(`${tenant.api}/accounts-receivable`, {
    method: 'POST',
    headers: { ...tenant.headers, 'idempotency-key': key },
    body,
  });
}

/** POST-to-callback latency (ms) of these charges, sorted; every one must have been called back. */
function latencies(tenant: Tenant, ids: string[]): number[] {
  return ids
    .map((id) => {
      const at = tenant.receiver.bodies.get(id);
      if (at === undefined) throw new Error(`${tenant.name}: no callback for ${id}`);
      return at - (tenant.postedAt.get(id) ?? at);
    })
    .sort((a, b) => a - b);
}

/** Charges of `ids` not called back yet. */
const backlogOf = (tenant: Tenant, ids: string[]) => ids.filter((id) => !tenant.receiver.bodies.has(id)).length;

const until = async (check: () => boolean, timeoutMs: number, what: string) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * B's 10 batches of 10: one every B_GAP_MS from the first (start to start), or each once the previous
 * was accepted when B_GAP_MS is 0. `onPost` is told before each. Resolves with every id, once all are accepted.
 */
async function postSmallBatches(tenant: Tenant, onPost: () => void = () => undefined): Promise<string[]> {
  const started = Date.now();
  const batches: Array<Promise<string[]>> = [];
  for (let i = 0; i < B_BATCHES; i++) {
    if (B_GAP_MS > 0) await sleep(Math.max(0, started + i * B_GAP_MS - Date.now()));
    onPost();
    const batch = post(tenant, B_BATCH);
    batches.push(batch);
    if (B_GAP_MS === 0) await batch;
  }
  return (await Promise.all(batches)).flat();
}

/** B's batches posted while A's backlog drains, and what they met. */
interface Probe {
  label: string;
  ids: string[];
  /** A's backlog (charges not called back) at each of B's POSTs. */
  backlog: number[];
  backlogWhenDone: number;
  latencies: number[];
  stages: Stage[];
}

/** B's batches, timed; `a` (if any) is the backlog they meet. */
async function probe(
  databaseUrl: string,
  b: Tenant,
  label: string,
  a?: { tenant: Tenant; ids: string[] },
): Promise<Probe> {
  const backlog: number[] = [];
  const backlogNow = () => (a ? backlogOf(a.tenant, a.ids) : 0);
  const ids = await postSmallBatches(b, () => backlog.push(backlogNow()));
  await until(() => backlogOf(b, ids) === 0, 120_000, `B's callbacks ${label}`);
  return {
    label,
    ids,
    backlog,
    backlogWhenDone: backlogNow(),
    latencies: latencies(b, ids),
    stages: await stages(databaseUrl, b, ids),
  };
}

const summary = (sorted: number[]) =>
  `p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted[sorted.length - 1])} ms`;

/** One stage of a charge's way from POST to callback, per charge (ms, sorted). */
interface Stage {
  label: string;
  ms: number[];
}

const ms = (d: Date | null) => (d === null ? undefined : d.getTime());

/**
 * Where B's charges spent their time, from the client's clock and the services' own tables (one
 * machine, one clock): the POST answered (gateway and intake); the registration job started, i.e. the
 * charge's registration mark written just before the bank is called (outbox relay, the registrations
 * stream, the fair queue and any deferral); the sandbox bank's insert began (the mark's commit, the
 * HTTP call); registered (the bank's commit and answer, the results' first statement); the callback
 * event stored in callback-svc (outbox relay, the callbacks stream, ingest); its first attempt started
 * (claim); the receiver's arrival (HTTP).
 */
async function stages(databaseUrl: string, tenant: Tenant, ids: string[]): Promise<Stage[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const registered = await client.query<{
      ar: string;
      marked: Date | null;
      banked: Date | null;
      registered: Date | null;
    }>(
      `select r.account_receivable_id as ar, m.marked_at as marked, c.created_at as banked, r.registered_at as registered
         from receivables.receivables r left join receivables.registration_marks m on m.receivable_id = r.id
         left join bank_sandbox.charges c on c.idempotency_key = r.id::text
        where r.tenant_id = $1 and r.account_receivable_id = any($2::uuid[])`,
      [tenant.tenantId, ids],
    );
    const events = await client.query<{ ar: string; stored: Date; attempted: Date | null }>(
      `select e.receivable_id as ar, e.created_at as stored, min(a.attempted_at) as attempted
         from callbacks.events e left join callbacks.attempts a on a.event_id = e.event_id
        where e.tenant_id = $1 and e.event_type = 'receivable.registered' and e.receivable_id = any($2::uuid[])
        group by e.receivable_id, e.created_at`,
      [tenant.tenantId, ids],
    );
    const callback = new Map(events.rows.map((e) => [e.ar.toLowerCase(), e]));
    const points = registered.rows.map((r) => {
      const ar = r.ar.toLowerCase();
      const e = callback.get(ar);
      return [
        tenant.postedAt.get(ar),
        tenant.acceptedAt.get(ar),
        ms(r.marked),
        ms(r.banked),
        ms(r.registered),
        e && ms(e.stored),
        e && ms(e.attempted),
        tenant.receiver.bodies.get(ar),
      ];
    });
    const labels = [
      'POST answered (gateway, intake)',
      'registration started (relay, stream, fair queue)',
      'bank began its insert (mark commit, HTTP)',
      'registered (bank commit, answer)',
      'event stored (relay, stream, ingest)',
      'first attempt (claim)',
      'arrived (HTTP)',
    ];
    return labels.map((label, i) => ({
      label,
      ms: points
        .flatMap((p) => {
          const from = p[i];
          const to = p[i + 1];
          return from === undefined || to === undefined ? [] : [to - from];
        })
        .sort((x, y) => x - y),
    }));
  } finally {
    await client.end();
  }
}

const stageLine = (s: Stage) => `${s.label} ${fmt(percentile(s.ms, 50))}/${fmt(percentile(s.ms, 99))}`;

function printProbe(p: Probe, withBacklog: boolean): void {
  const p99 = percentile(p.latencies, 99);
  const verdict = withBacklog
    ? `   (target p99 < ${fmt(TARGET_P99_MS)} ms: ${p99 < TARGET_P99_MS ? 'met' : 'NOT met'})`
    : '';
  console.log(`    B ${p.label}: ${summary(p.latencies)}${verdict}`);
  if (withBacklog)
    console.log(
      `      A's backlog (not called back yet): ${fmt(p.backlog[0])} at B's first POST, ${fmt(p.backlog[p.backlog.length - 1])} at its last, ${fmt(p.backlogWhenDone)} when B's last callback arrived`,
    );
  console.log(`      stages p50/p99 ms: ${p.stages.map(stageLine).join(' | ')}`);
}

/** One run of the scenario: the baseline, then A's 20,000 with B's batches at A's first POST and once A is accepted. */
async function runOnce(databaseUrl: string, a: Tenant, b: Tenant, run: number): Promise<Probe[]> {
  const baseline = await probe(databaseUrl, b, 'baseline (nothing else queued)');

  const aBatches = A_TOTAL / A_BATCH;
  const aIds: string[] = [];
  const backlog = { tenant: a, ids: aIds };
  const started = Date.now();
  const rateLimitedBefore = a.rateLimited;
  let next = 0;
  const postingA = Promise.all(
    Array.from({ length: A_CONCURRENT_POSTS }, async () => {
      while (next < aBatches) {
        next += 1;
        aIds.push(...(await post(a, A_BATCH)));
      }
    }),
  ).then(() => Date.now() - started);
  // B's first POST goes with A's first; its backlog counts A's accepted charges so far.
  const withA = probe(databaseUrl, b, `from A's first POST (${B_BATCHES} batches of ${B_BATCH})`, backlog);
  const acceptedIn = await postingA;
  const afterA = probe(databaseUrl, b, `from A's 20,000 accepted (${B_BATCHES} batches of ${B_BATCH})`, backlog);
  const probes = [await withA, await afterA];
  await until(() => backlogOf(a, aIds) === 0, 600_000, "A's callbacks");
  const drainedIn = Date.now() - started;

  console.log(
    `  run ${run}: A's ${fmt(A_TOTAL)} accepted in ${fmt(acceptedIn / 1000, 2)} s (${a.rateLimited - rateLimitedBefore} answers 429 sent again), all called back after ${fmt(drainedIn / 1000, 1)} s; A's POST to callback ${summary(latencies(a, aIds))}`,
  );
  printProbe(baseline, false);
  for (const p of probes) printProbe(p, true);
  return [baseline, ...probes];
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const { env, gatewayPort } = await systemEnv(database.url, prefix);
  // The rate limit at its defaults (5,000 charges a second, bursts of 5,000): A's 20,000 are paced by
  // it, as they would be in production.
  delete env.RATE_LIMIT_PER_SECOND;
  // The sandbox's Inter dialect (unused here) on a free port: its fixed default collides with any
  // other system running on the machine, and the sandbox would not start.
  env.BANK_SANDBOX_INTER_PORT = String(await freePort());

  const children: ChildProcess[] = [];
  const tenants: Tenant[] = [];
  try {
    children.push(await startApp('bank-sandbox', env, 'bank-sandbox ready'));
    children.push(await startApp('clients-svc', env, 'clients-svc ready'));
    children.push(await startApp('callback-svc', env, 'callback-svc ready'));
    children.push(await startApp('receivables-svc', env, 'receivables-svc ready'));
    children.push(await startApp('gateway', env, 'gateway listening'));
    const api = `http://127.0.0.1:${gatewayPort}/api/v1`;
    const a = await setUpTenant('A', api, database.url);
    const b = await setUpTenant('B', api, database.url);
    tenants.push(a, b);

    // Warm-up (connections, JIT): one small batch each, called back.
    const warm = [...(await post(a, B_BATCH)), ...(await post(b, B_BATCH))];
    await until(() => warm.every((id) => a.receiver.bodies.has(id) || b.receiver.bodies.has(id)), 60_000, 'warm-up');

    console.log(
      `\nbench/fairness: ${RUNS} runs; B posts ${B_BATCHES} batches of ${B_BATCH}, ${B_GAP_MS > 0 ? `one every ${B_GAP_MS} ms` : 'one after another'}; A ${fmt(A_TOTAL)} charges in POSTs of ${fmt(A_BATCH)}, ${A_CONCURRENT_POSTS} at a time`,
    );
    const worst = new Map<string, number>();
    for (let run = 1; run <= RUNS; run++) {
      const probes = await runOnce(database.url, a, b, run);
      for (const [i, p] of probes.entries()) {
        const key = ['baseline', "from A's first POST", "from A's 20,000 accepted"][i];
        worst.set(key, Math.max(worst.get(key) ?? 0, percentile(p.latencies, 99)));
      }
    }
    console.log(`  worst B p99 over ${RUNS} runs, POST to registered callback:`);
    for (const [key, p99] of worst) {
      const verdict =
        key === 'baseline' ? '' : `   (target < ${fmt(TARGET_P99_MS)} ms: ${p99 < TARGET_P99_MS ? 'met' : 'NOT met'})`;
      console.log(`    ${key}: ${fmt(p99)} ms${verdict}`);
    }
  } finally {
    await stopApps(children);
    for (const tenant of tenants) await tenant.receiver.stop();
    await deleteStreams(prefix);
    await database.drop();
  }
}

runBench(main);
