/**
 * bench/callbacks: how fast callback-svc delivers, beside a bare loop of HTTP POSTs to the same
 * receiver in the same run. Targets (issue 3): >= 50 % of the bare loop's rate; p99 publish -> delivery
 * under 200 ms at 1,000 events/s. callback-svc runs as its own process, as in production.
 */
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { connectBus } from '@payments/bus';
import { Streams, type CallbackRequestBatch } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import { CountingReceiver, fmt, percentile, randomPrefix } from './support';

const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const RATE_PER_SECOND = 1000;
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 5);
const BARE_CONCURRENCY = 64;

/** Baseline 1: Node's standard HTTP client (fetch) in a loop, nothing else. */
async function bareFetchLoop(url: string, n: number, body: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next += 1;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': `bare_${next}` },
        body,
      });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: BARE_CONCURRENCY }, worker));
  return n / ((performance.now() - started) / 1000);
}

/** Baseline 2: the HTTP client the service itself uses (undici.request) in a loop, nothing else. */
async function bareLoop(url: string, n: number, body: string): Promise<number> {
  const agent = new Agent({ connections: BARE_CONCURRENCY, keepAliveTimeout: 10_000 });
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next += 1;
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': `bare_${next}` },
        body,
        dispatcher: agent,
      });
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: BARE_CONCURRENCY }, worker));
  const rate = n / ((performance.now() - started) / 1000);
  await agent.close();
  return rate;
}

async function main(): Promise<void> {
  const logger = createLogger('bench', 'warn');
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const env = { DATABASE_URL: database.url, BUS_PREFIX: prefix, PORT: '0', CALLBACK_PORT: '0', LOG_LEVEL: 'warn' };
  const gateway = await startGateway(loadGatewayConfig(env), logger);
  const admin = await openAdminDatabase(database.url);
  const tenant = await createTenant(admin, 'bench');
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROFILE] : []),
      '--import',
      'tsx',
      join(__dirname, '..', 'apps', 'callback-svc', 'src', 'main.ts'),
    ],
    {
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve) =>
    child.stdout!.on('data', (c: Buffer) => String(c).includes('callback-svc ready') && resolve()),
  );
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'bench', logger });
  await bus.streams.ensure(Streams.callbackRequests);
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
    return bus.streams.publish(Streams.callbackRequests, batch, id).then(() => ({ id, sentAt }));
  };

  try {
    // Warm-up (connections, JIT, secret cache).
    await Promise.all(Array.from({ length: 200 }, () => publish(Date.now())));
    await receiver.waitForCount(200);

    // 1. Bare loop: the receiver's own ceiling on this machine.
    receiver.reset();
    const bareFetchRate = await bareFetchLoop(receiver.url, THROUGHPUT_EVENTS, JSON.stringify(payload));
    receiver.reset();
    const bareRate = await bareLoop(receiver.url, THROUGHPUT_EVENTS, JSON.stringify(payload));

    // 2. Throughput: publish everything at once, time until the last delivery.
    receiver.reset();
    const started = performance.now();
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < THROUGHPUT_EVENTS; i++) {
      inFlight.push(publish(Date.now()));
      if (inFlight.length >= 500) await Promise.all(inFlight.splice(0));
    }
    await Promise.all(inFlight);
    await receiver.waitForCount(THROUGHPUT_EVENTS);
    const serviceRate = THROUGHPUT_EVENTS / ((performance.now() - started) / 1000);

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
    await receiver.waitForCount(total);
    const latencies = sent.map((s) => receiver.arrivals.get(s.id)! - s.sentAt).sort((a, b) => a - b);

    console.log('\nbench/callbacks');
    console.log(`  bare loop, fetch POSTs (${BARE_CONCURRENCY} concurrent):         ${fmt(bareFetchRate)} requests/s`);
    console.log(`  bare loop, undici.request POSTs (${BARE_CONCURRENCY} concurrent): ${fmt(bareRate)} requests/s`);
    console.log(
      `  callback-svc deliveries (${fmt(THROUGHPUT_EVENTS)} events):        ${fmt(serviceRate)} deliveries/s`,
    );
    console.log(
      `  ratio service / bare fetch loop:  ${fmt((serviceRate / bareFetchRate) * 100, 1)} %   (target >= 50 %)`,
    );
    console.log(`  ratio service / bare undici loop: ${fmt((serviceRate / bareRate) * 100, 1)} %`);
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
    const jsm = await (
      await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'bench-cleanup', logger })
    ).connection.jetstreamManager();
    for await (const s of jsm.streams.list())
      if (s.config.name.includes(prefix)) await jsm.streams.delete(s.config.name);
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
