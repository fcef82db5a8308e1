import type { JetStreamManager, NatsConnection, StreamConfig } from 'nats';
import type { Logger } from '@payments/logger';
import { retryTransient } from './jetstream-retry';

/** How long ensure waits for a stream whose replicas changed to have a leader again. */
const LEADER_TIMEOUT_MS = 15_000;

/**
 * addOrUpdateStream at start-up: tried again (logged, for up to STARTUP_RETRY_MS) while the cluster
 * is not ready (a request timed out, no meta leader yet...), so that instances started together with
 * the cluster, or during a leader election, wait for it rather than exit. Other errors fail at once.
 */
export function ensureStream(
  nc: NatsConnection,
  config: Partial<StreamConfig> & { name: string },
  logger?: Logger,
): Promise<void> {
  return retryTransient(`stream ${config.name}`, async () => addOrUpdateStream(await nc.jetstreamManager(), config), {
    logger,
  });
}

/**
 * Creates the stream, or brings an existing one to `config` (max_bytes, num_replicas...). Safe from
 * every instance at once: a stream another instance just created is updated instead. When the
 * replicas change (an R1 stream raised to R3), JetStream elects the stream's leader anew, and
 * requests to it go unanswered until then (about half a second on a local 3-node cluster): this
 * resolves once the stream has a leader again, so the first publish does not time out.
 */
export async function addOrUpdateStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  try {
    const before = await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
    if (config.num_replicas !== undefined && before.config.num_replicas !== config.num_replicas)
      await untilStreamLed(jsm, config.name);
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add(config).catch((addErr: Error) => {
      // Another instance created it in the meantime.
      if (!/already in use|exists/i.test(addErr.message)) throw addErr;
    });
  }
}

/** Resolves once the stream (on a cluster) has a leader; a single server's streams always have one. */
export async function untilStreamLed(
  jsm: JetStreamManager,
  name: string,
  timeoutMs = LEADER_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await jsm.streams.info(name).catch(() => undefined);
    if (info && (!info.cluster || info.cluster.leader)) return;
    if (Date.now() > deadline)
      throw new Error(`stream ${name} has no leader ${timeoutMs} ms after its replicas changed`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
