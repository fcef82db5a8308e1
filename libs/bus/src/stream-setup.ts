import type { JetStreamManager } from 'nats';

/** How long the provisioner waits for a stream whose replicas changed to have a leader again. */
const LEADER_TIMEOUT_MS = 15_000;

/**
 * Resolves once the stream (on a cluster) has a leader; a single server's streams always have one.
 * When the replicas change (an R1 stream raised to R3), JetStream elects the stream's leader anew,
 * and requests to it go unanswered until then (about half a second on a local 3-node cluster): the
 * provisioner waits for it, so that the first publish after it does not time out.
 */
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
