import { spawn, type ChildProcess } from 'node:child_process';
import { startNatsCluster, type NatsCluster } from '@payments/test-support/nats-cluster';

/*
 * nats-servers of a test's own, for the cases the machine's shared server cannot play: a single
 * server with a configuration of its own (TLS, limited users, no JetStream), or a private cluster.
 */

const BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** A loopback port free a moment ago. */
export { freePort } from '@payments/test-support/free-port';

/**
 * Runs nats-server with these arguments and resolves once it says it is ready; one that exits or is
 * not ready within 20 s is killed and the start fails with what it logged.
 */
export async function spawnNatsServer(args: string[]): Promise<ChildProcess> {
  const child = spawn(BIN, args);
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const end = Date.now() + 20_000;
  while (!output.includes('Server is ready')) {
    if (child.exitCode !== null || Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

/**
 * A private 3-node cluster for the whole test file, started before its tests (`use` gets it); after
 * them the buses the tests pushed on `opened` are closed, then the cluster.
 */
export function useNatsCluster(
  opened: ReadonlyArray<{ close(): Promise<void> }>,
  use: (cluster: NatsCluster) => void,
): void {
  let cluster: NatsCluster | undefined;
  beforeAll(async () => {
    cluster = await startNatsCluster({ size: 3 });
    use(cluster);
  }, 60_000);
  afterAll(async () => {
    for (const bus of opened) await bus.close().catch(() => undefined);
    await cluster?.close();
  });
}
