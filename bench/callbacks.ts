/**
 * bench/callbacks: how fast callback-svc delivers, beside a bare loop of undici POSTs to the same
 * receiver in the same run. Targets: >= 50 % of the bare loop's rate; p99 publish -> delivery
 * under 200 ms at 1,000 events/s. callback-svc runs as its own process, as in production, and so does
 * the bare loop (bench/callbacks-bare-sender.ts): the same client and Agent settings, the same number
 * in flight to one host, the same body and headers. Both are timed at the receiver, until every event
 * has arrived, counted by distinct webhook-id.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import { connectBus } from '@payments/bus';
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';
import { messageIds, Streams, type CallbackRequestBatch } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import type { BareSenderJob } from './callbacks-bare-sender';
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
} from './support';

const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const RATE_PER_SECOND = 1000;
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 5);
const WARM_UP_EVENTS = 200;
// callback-svc's settings as its child process reads them (apps/callback-svc/src/config.ts defaults).
const HOST_CONCURRENCY = Number(process.env.CALLBACK_HOST_CONCURRENCY ?? 32);
const TIMEOUT_MS = Number(process.env.CALLBACK_TIMEOUT_MS ?? 10_000);

/** Starts a TypeScript file in its own Node process with tsx: callback-svc, and the bare sender. */
function spawnTs(script: string, env: NodeJS.ProcessEnv, stdio: StdioOptions) {
  return spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROFILE] : []),
      '--import',
      'tsx',
      script,
    ],
    { env, stdio },
  );
}

/**
 * Baseline: the bare sender's rate, from its 'go' until the receiver has every event (distinct
 * webhook-ids), as the service's is timed from the first publish.
 */
async function bareLoopRate(receiver: CountingReceiver, events: number, body: string): Promise<number> {
  const child = spawnTs(join(__dirname, 'callbacks-bare-sender.ts'), process.env, [
    'ignore',
    'inherit',
    'inherit',
    'ipc',
  ]);
  const exited = new Promise((r) => child.once('exit', r));
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`bare sender exited ${code}`)));
    });
  try {
    const job: BareSenderJob = {
      url: receiver.url,
      events,
      warmUpEvents: WARM_UP_EVENTS,
      concurrency: HOST_CONCURRENCY,
      timeoutMs: TIMEOUT_MS,
      body,
    };
    const ready = next();
    child.send(job);
    await ready;
    receiver.reset();
    const sent = next();
    const started = performance.now();
    child.send('go');
    await receiver.waitForEvents(events);
    const rate = events / ((performance.now() - started) / 1000);
    await sent;
    return rate;
  } finally {
    if (child.connected) child.disconnect();
    await exited;
  }
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const logger = createLogger('bench', 'warn');
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const env = { DATABASE_URL: database.url, BUS_PREFIX: prefix, PORT: '0', CALLBACK_PORT: '0', LOG_LEVEL: 'warn' };
  // The services only check their schema and the bus at start: migrated and provisioned first, as
  // npm start does; each app then logs in as its own role.
  await migrate(database.url);
  await provisionBusFor({ ...process.env, ...env });
  const gateway = await startGateway(
    loadGatewayConfig({ ...env, DATABASE_URL: appDatabaseUrl('gateway', database.url) }),
    logger,
  );
  const admin = await openAdminDatabase(database.url);
  const tenant = await createTenant(admin, 'bench');
  const child = spawnTs(
    join(__dirname, '..', 'apps', 'callback-svc', 'src', 'main.ts'),
    { ...process.env, ...env, DATABASE_URL: appDatabaseUrl('callback-svc', database.url), LOG_LEVEL: 'info' },
    ['ignore', 'pipe', 'inherit'],
  );
  await new Promise<void>((resolve) =>
    child.stdout!.on('data', (c: Buffer) => String(c).includes('callback-svc ready') && resolve()),
  );
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'bench', logger });
  const receiver = await new CountingReceiver().start();
  const payload = {
    success: true,
    type: 'registered',
    accounts_receivable_id: randomUUID(),
    payment_data: {
      typeable_line: '2379'.repeat(11) + '123',
      barcode: '2'.repeat(44),
      our_number: '00001234',
      pix_copy_and_paste: 'x'.repeat(180),
      qrcode_image: 'http://localhost/q.png',
      pdf: 'http://localhost/p.pdf',
    },
  };
  const publish = (sentAt: number) => {
    const id = `evt_${randomUUID().replace(/-/g, '')}`;
    // A batch of one per event: the worst case (a payment's or a cancellation's callback travels so).
    const batch: CallbackRequestBatch = {
      requests: [
        {
          event_id: id,
          tenant_id: tenant.tenant_id,
          event_type: 'receivable.registered',
          url: receiver.url,
          payload: { ...payload, sent_at: sentAt },
        },
      ],
    };
    return bus.streams
      .publish(Streams.callbackRequests, batch, messageIds.callbackBatch(batch))
      .then(() => ({ id, sentAt }));
  };

  try {
    // Warm-up (connections, JIT, secret cache).
    await Promise.all(Array.from({ length: WARM_UP_EVENTS }, () => publish(Date.now())));
    await receiver.waitForEvents(WARM_UP_EVENTS);

    // 1. Bare loop: the receiver's own ceiling on this machine, fed as the service feeds it.
    const bareRate = await bareLoopRate(
      receiver,
      THROUGHPUT_EVENTS,
      JSON.stringify({ ...payload, sent_at: Date.now() }),
    );

    // 2. Throughput: publish everything at once, time until the last delivery.
    receiver.reset();
    const started = performance.now();
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < THROUGHPUT_EVENTS; i++) {
      inFlight.push(publish(Date.now()));
      if (inFlight.length >= 500) await Promise.all(inFlight.splice(0));
    }
    await Promise.all(inFlight);
    await receiver.waitForEvents(THROUGHPUT_EVENTS);
    const serviceRate = THROUGHPUT_EVENTS / ((performance.now() - started) / 1000);
    const serviceRequests = receiver.requests;

    // 3. Latency at a steady 1,000 events/s.
    receiver.reset();
    const sent: Array<{ id: string; sentAt: number }> = [];
    const total = RATE_PER_SECOND * RATE_SECONDS;
    const t0 = Date.now();
    const pending: Promise<{ id: string; sentAt: number }>[] = [];
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / RATE_PER_SECOND;
      const wait = due - Date.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(publish(Date.now()));
    }
    sent.push(...(await Promise.all(pending)));
    await receiver.waitForEvents(total);
    const latencies = sent.map((s) => receiver.arrivals.get(s.id)! - s.sentAt).sort((a, b) => a - b);

    console.log('\nbench/callbacks');
    console.log(
      `  bare loop, undici POSTs from its own process (${HOST_CONCURRENCY} in flight, ${fmt(THROUGHPUT_EVENTS)} events): ${fmt(bareRate)} events/s`,
    );
    console.log(
      `  callback-svc deliveries (${fmt(THROUGHPUT_EVENTS)} events, ${fmt(serviceRequests)} requests):              ${fmt(serviceRate)} events/s`,
    );
    console.log(`  ratio service / bare loop: ${fmt((serviceRate / bareRate) * 100, 1)} %   (target >= 50 %)`);
    console.log(
      `  publish -> delivery at ${fmt(RATE_PER_SECOND)} events/s for ${RATE_SECONDS} s: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms, max ${fmt(latencies[latencies.length - 1])} ms   (target p99 < 200 ms)`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await receiver.stop();
    await bus.close();
    await gateway.stop();
    await admin.destroy();
    await deleteStreams(prefix);
    await database.drop();
  }
}

runBench(main);
