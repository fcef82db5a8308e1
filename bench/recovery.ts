/**
 * bench/recovery: how long the system stalls when an instance dies. 2 instances of every service on
 * a private 3-node NATS cluster (R3 streams), the apps' default ack waits, heartbeats and callback
 * leases. Once a quarter of BENCH_RECOVERY_CHARGES charges have their registered callback, kill -9
 * one receivables-svc, one callback-svc, one booklet-svc and the NATS node leading the registration
 * stream, and start them again. Prints the longest stall (the largest gap between consecutive
 * callbacks from the kills on) and the time from the kills to the last callback, against the goal:
 * the last callback within 15 s of the kills.
 */
import { connect } from 'nats';
import { natsServers } from '@payments/bus';
import { startNatsCluster } from '@payments/test-support/nats-cluster';
import { CallbackTally, postCharges } from '@payments/test-support/charge-load';
import { startClusterSystem } from './cluster-system';
import { developmentUnlessSet, fmt, runBench } from './support';

const TOTAL = Number(process.env.BENCH_RECOVERY_CHARGES ?? 4_000);
const GOAL_S = 15;

async function main(): Promise<void> {
  developmentUnlessSet();
  const cluster = await startNatsCluster();
  const tally = await new CallbackTally().start();
  const system = await startClusterSystem(cluster, 2).catch(async (err: unknown) => {
    await cluster.close();
    throw err;
  });
  const nc = await connect({ servers: natsServers(cluster.url) });
  try {
    const { accessToken, clientId } = await system.newTenant();
    const posting = postCharges({
      gateways: system.gateways,
      accessToken,
      clientId,
      callbackUrl: tally.url,
      total: TOTAL,
      batchSize: 500,
      concurrency: 2,
    });
    await tally.waitForRegistered(TOTAL / 4, 300_000);

    const jsm = await nc.jetstreamManager();
    const leader = (await jsm.streams.info(`${system.prefix}_registrations`)).cluster?.leader;
    if (!leader) throw new Error('the registration stream has no leader');
    const victims = (['receivables-svc', 'callback-svc', 'booklet-svc'] as const).map((app) =>
      system.fleet.instance(app, 0),
    );
    const killedAt = Date.now();
    const registeredAtKill = tally.registered.size;
    await Promise.all([...victims.map((v) => v.kill()), cluster.stop(leader)]);
    await Promise.all([...victims.map((v) => v.start()), cluster.start(leader)]);
    const backAt = Date.now();
    await posting;
    await tally.waitForRegistered(TOTAL, 600_000);
    // Late re-sent deliveries still count towards the figures.
    await new Promise((r) => setTimeout(r, 2_000));

    const lastS = (tally.lastArrival - killedAt) / 1000;
    const stallS = tally.longestStallAfter(killedAt) / 1000;
    console.log('\nbench/recovery');
    console.log(
      `  2 instances of every service, 3-node NATS cluster (R3), ${fmt(TOTAL)} charges; killed at ${fmt(registeredAtKill)} registered callbacks:`,
    );
    console.log(
      `  kill -9 of ${victims.map((v) => v.name).join(', ')} and NATS node ${leader} (registration stream leader), restarted at once: all ready again ${fmt((backAt - killedAt) / 1000, 1)} s after the kills`,
    );
    console.log(`  longest stall after the kills: ${fmt(stallS, 1)} s`);
    console.log(
      `  last callback ${fmt(lastS, 1)} s after the kills   (goal: within ${GOAL_S} s: ${lastS <= GOAL_S ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  ${fmt(tally.events.size)} distinct events, ${fmt(tally.resent)} re-sent deliveries, ${fmt(tally.registered.size)} charges with a registered callback`,
    );
    console.log(
      `  callback-svc's worker lease: CALLBACK_LEASE_MS ${process.env.CALLBACK_LEASE_MS ?? 'unset (its default)'}`,
    );
  } finally {
    await nc.close();
    await system.stop();
    await tally.stop();
    await cluster.close();
  }
}

runBench(main);
