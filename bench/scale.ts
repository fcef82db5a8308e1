/**
 * bench/scale: throughput of 1 against 2 instances of every service on a private 3-node NATS cluster
 * (R3 streams), alternated in one run (1, 2, 1, 2) so that a drift of the machine hits both alike.
 * Each run starts its system afresh (own database and bus prefix), posts BENCH_SCALE_CHARGES charges
 * through its gateways (batches alternate between them) and counts charges registered with their
 * callback per second, from the first POST to the last callback.
 */
import { CallbackTally, postCharges } from '@payments/test-support/charge-load';
import { startNatsCluster } from '@payments/test-support/nats-cluster';
import { startClusterSystem } from './cluster-system';
import { developmentUnlessSet, fmt, runBench } from './support';

const TOTAL = Number(process.env.BENCH_SCALE_CHARGES ?? 5_000);
const ORDER = [1, 2, 1, 2];

async function run(cluster: Awaited<ReturnType<typeof startNatsCluster>>, instances: number): Promise<number> {
  const tally = await new CallbackTally().start();
  const system = await startClusterSystem(cluster, instances);
  try {
    const { accessToken, clientId } = await system.newTenant();
    const started = Date.now();
    await postCharges({
      gateways: system.gateways,
      accessToken,
      clientId,
      callbackUrl: tally.url,
      total: TOTAL,
      batchSize: 1_000,
      concurrency: 2,
    });
    await tally.waitForRegistered(TOTAL, 600_000);
    const rate = TOTAL / ((tally.lastArrival - started) / 1000);
    console.log(
      `  ${instances} instance${instances > 1 ? 's' : ''} of each service: ${fmt(rate)} charges registered with callbacks/s (${fmt((tally.lastArrival - started) / 1000, 1)} s, ${fmt(tally.resent)} re-sent)`,
    );
    return rate;
  } finally {
    await system.stop();
    await tally.stop();
  }
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const cluster = await startNatsCluster();
  try {
    console.log(
      `\nbench/scale: ${fmt(TOTAL)} charges a run, 3-node NATS cluster (R3), runs in the order ${ORDER.join(', ')}`,
    );
    const rates: Record<number, number[]> = { 1: [], 2: [] };
    for (const n of ORDER) rates[n].push(await run(cluster, n));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `  mean: 1 instance ${fmt(mean(rates[1]))}/s, 2 instances ${fmt(mean(rates[2]))}/s; ratio 2 / 1: ${fmt(mean(rates[2]) / mean(rates[1]), 2)}`,
    );
    console.log(
      '  note: every instance, the 3 NATS nodes and Postgres share the same 2 cores, so a second instance adds\n' +
        '  processes competing for them: this shows the overhead of scaling out, not a speed-up (which needs\n' +
        '  instances on machines of their own).',
    );
  } finally {
    await cluster.close();
  }
}

runBench(main);
