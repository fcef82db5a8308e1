/**
 * bench/slow-receivers: one tenant's slow receivers against another tenant's callbacks
 * (docs/architecture.md, Callbacks: delivery is shared by tenant first). Tenant A's 600 callbacks go
 * to 8 receivers on 8 loopback addresses (127.0.0.2-9), each answering only after 9.5 s; once they
 * hang, tenant B sends 30 callbacks to a healthy receiver, one every 100 ms. B's wait (published on
 * the bus to arrived at its receiver), p50 and p99, is printed beside B alone in the same run, and
 * beside the same load with the tenant share off (CALLBACK_TENANT_SHARE_PERCENT=100: slots shared per
 * host only). Each scenario runs on a fresh callback-svc, database and bus prefix. Goal: B's p99 < 2 s.
 */
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { connectBus, type Bus } from '@payments/bus';
import { messageIds, Streams, type CallbackRequest, type CallbackRequestBatch } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import { SlowReceivers } from '@payments/test-support/slow-receivers';
import {
  appDatabaseUrl,
  CountingReceiver,
  deleteStreams,
  developmentUnlessSet,
  fmt,
  migrate,
  percentile,
  randomPrefix,
  runBench,
  startApp,
} from './support';

const SLOW_HOSTS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const ANSWER_AFTER_MS = 9_500;
const A_CALLBACKS = 600;
const B_CALLBACKS = 30;
const B_EVERY_MS = 100;

function request(tenantId: string, url: string): CallbackRequest {
  return {
    event_id: `evt_${randomUUID().replace(/-/g, '')}`,
    tenant_id: tenantId,
    event_type: 'receivable.registered',
    url,
    payload: { success: true, type: 'registered', accounts_receivable_id: randomUUID() },
  };
}

async function publish(bus: Bus, requests: CallbackRequest[]): Promise<void> {
  const batch: CallbackRequestBatch = { requests };
  await bus.streams.publish(Streams.callbackRequests, batch, messageIds.callbackBatch(batch));
}

interface Outcome {
  p50: number;
  p99: number;
  max: number;
  /** Most requests A's receivers held open at once. */
  aOpen: number;
}

/** One scenario on a fresh system: B's 30 callbacks, with A's 600 hanging first when `withA`. */
async function scenario(withA: boolean, env: Record<string, string>): Promise<Outcome> {
  const logger = createLogger('bench', 'warn');
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const base = { DATABASE_URL: database.url, BUS_PREFIX: prefix, PORT: '0', LOG_LEVEL: 'warn' };
  // The services only check their schema and the bus at start: migrated and provisioned first, as
  // npm start does; each app then logs in as its own role.
  await migrate(database.url);
  await provisionBusFor({ ...process.env, ...base });
  const gateway = await startGateway(
    loadGatewayConfig({ ...base, DATABASE_URL: appDatabaseUrl('gateway', database.url) }),
    logger,
  );
  const admin = await openAdminDatabase(database.url);
  const [a, b] = [await createTenant(admin, 'bench A'), await createTenant(admin, 'bench B')];
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'bench', logger });
  const fast = await new CountingReceiver().start();
  const slow = await new SlowReceivers(SLOW_HOSTS, ANSWER_AFTER_MS, '/hook').start();
  let child: ChildProcess | undefined;
  try {
    child = await startApp(
      'callback-svc',
      { ...base, DATABASE_URL: appDatabaseUrl('callback-svc', database.url), CALLBACK_PORT: '0', ...env },
      'callback-svc ready',
    );
    await new Promise((r) => setTimeout(r, 1_000));
    if (withA) {
      const requests = Array.from({ length: A_CALLBACKS }, (_, i) => request(a.tenant_id, slow.urls[i % 8]));
      for (let i = 0; i < requests.length; i += 100) await publish(bus, requests.slice(i, i + 100));
      // A's callbacks are out and hanging: nothing more of them starts for 9.5 s.
      const end = Date.now() + 10_000;
      let open = -1;
      while (slow.openNow !== open && Date.now() < end) {
        open = slow.openNow;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const sentAt = new Map<string, number>();
    for (let i = 0; i < B_CALLBACKS; i++) {
      const r = request(b.tenant_id, fast.url);
      sentAt.set(r.event_id, Date.now());
      await publish(bus, [r]);
      await new Promise((resolve) => setTimeout(resolve, B_EVERY_MS));
    }
    await fast.waitForEvents(B_CALLBACKS, 60_000);
    const waits = [...sentAt].map(([id, at]) => (fast.arrivals.get(id) ?? NaN) - at).sort((x, y) => x - y);
    return {
      p50: percentile(waits, 50),
      p99: percentile(waits, 99),
      max: waits[waits.length - 1],
      aOpen: slow.maxOpen,
    };
  } finally {
    await slow.stop();
    child?.kill('SIGTERM');
    if (child && child.exitCode === null) await new Promise((r) => child!.once('exit', r));
    await fast.stop();
    await bus.close();
    await gateway.stop();
    await admin.destroy();
    await deleteStreams(prefix);
    await database.drop();
  }
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const alone = await scenario(false, {});
  const shared = await scenario(true, {});
  const perHostOnly = await scenario(true, { CALLBACK_TENANT_SHARE_PERCENT: '100' });
  const line = (label: string, o: Outcome) =>
    console.log(
      `  ${label.padEnd(58)} p50 ${fmt(o.p50 / 1000, 2).padStart(6)} s  p99 ${fmt(o.p99 / 1000, 2).padStart(6)} s  max ${fmt(o.max / 1000, 2).padStart(6)} s  A's open at most ${fmt(o.aOpen)}`,
    );
  console.log(
    `\nbench/slow-receivers: B's ${B_CALLBACKS} callbacks (one per ${B_EVERY_MS} ms, bus to receiver) while A's ${A_CALLBACKS} hang on ${SLOW_HOSTS.length} hosts (answer after ${ANSWER_AFTER_MS / 1000} s)`,
  );
  line('baseline: B alone', alone);
  line('A hanging, tenant share (default, 25 %)', shared);
  line('A hanging, share off (100 %: slots shared per host only)', perHostOnly);
  console.log(`  goal: B's p99 < 2 s with A hanging: ${shared.p99 < 2_000 ? 'met' : 'NOT met'}`);
}

runBench(main);
