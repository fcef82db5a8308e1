/**
 * The system as N instances of every service on a private 3-node NATS cluster (R3 streams), for
 * bench/recovery and bench/scale: each instance its own process on ports of its own, a throw-away
 * database on the machine's Postgres, one bank sandbox.
 */
import { connect } from 'nats';
import { natsServers } from '@payments/bus';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import type { NatsCluster } from '@payments/test-support/nats-cluster';
import { Fleet, planPorts, SERVICES, type AppName } from '@payments/test-support/instances';
import { authenticate, createClient } from '@payments/test-support/charge-load';
import { randomPrefix } from './support';

export interface ClusterSystem {
  fleet: Fleet;
  prefix: string;
  gateways: string[];
  /** A new tenant's access token and a client of it, ready to post charges. */
  newTenant(): Promise<{ accessToken: string; clientId: string }>;
  stop(): Promise<void>;
}

/**
 * Starts `instances` of every service (and one bank sandbox) against `cluster`, with the apps'
 * defaults but for the rate limit (off: a bench posts as fast as intake takes charges), the pool
 * size (11 instances share the machine's Postgres with other work) and `env`.
 */
export async function startClusterSystem(
  cluster: NatsCluster,
  instances: number,
  env: Record<string, string> = {},
): Promise<ClusterSystem> {
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const counts: Partial<Record<AppName, number>> = { 'bank-sandbox': 1 };
  for (const app of SERVICES) counts[app] = instances;
  const plan = await planPorts(counts);
  const sandbox = `http://127.0.0.1:${plan['bank-sandbox']![0]}`;
  let fleet: Fleet;
  try {
    fleet = await Fleet.start(
      {
        DATABASE_URL: database.url,
        DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '6',
        NATS_URL: cluster.url,
        STREAM_REPLICAS: '3',
        BUS_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        PROVIDER_BASE_URL: sandbox,
        BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${plan['receivables-svc']![0]}/provider/webhooks/bank-sandbox`,
        PUBLIC_BASE_URL: `http://127.0.0.1:${plan.gateway![0]}`,
        RATE_LIMIT_PER_SECOND: '0',
        ...env,
      },
      plan,
    );
  } catch (err) {
    await database.drop();
    throw err;
  }
  const gateways = fleet.of('gateway').map((g) => g.url);
  return {
    fleet,
    prefix,
    gateways,
    async newTenant() {
      const admin = await openAdminDatabase(database.url);
      const tenant = await createTenant(admin, 'bench').finally(() => admin.destroy());
      const accessToken = await authenticate(gateways[0], tenant.integration_token);
      return { accessToken, clientId: await createClient(gateways[0], accessToken) };
    },
    async stop() {
      await fleet.killAll();
      await database.drop();
      await deleteStreams(cluster, prefix);
    },
  };
}

/** Removes a run's streams: each reserves its max_bytes of the cluster's storage (1 GB a node). */
async function deleteStreams(cluster: NatsCluster, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsServers(cluster.url) });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list())
      if (stream.config.name.includes(prefix)) await jsm.streams.delete(stream.config.name);
  } finally {
    await nc.close();
  }
}
