import { nanos, type Consumer, type JetStreamClient } from 'nats';
import type { StreamSpec } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { retryTransient } from './jetstream-retry';
import { BusTopologyError } from './topology-check';

/**
 * The durable consumer of `spec` on `stream`, as the provisioner made it (only got: a service may not
 * add or change one; the get is a CONSUMER.INFO). Its ack wait must be at least `ackWaitMs`, the one
 * heartbeats are sent for: a shorter one would hand a working message to another instance between
 * two heartbeats, so a missing consumer or a shorter ack wait is refused with BusTopologyError.
 */
export async function openDurableConsumer(
  js: () => JetStreamClient,
  spec: StreamSpec,
  at: { stream: string; prefix: string; ackWaitMs: number; logger: Logger },
): Promise<Consumer> {
  const { stream, prefix, ackWaitMs } = at;
  const name = `${stream}/${spec.consumer}`;
  // At start: tried again while the cluster is not ready.
  const consumer = await retryTransient(
    `consumer ${name}`,
    () =>
      js()
        .consumers.get(stream, spec.consumer)
        .catch((err: unknown) => {
          if (!/not found/i.test((err as Error)?.message ?? '')) throw err;
          throw new BusTopologyError(spec.consumer, prefix, [{ kind: 'consumer', name, problem: 'missing' }]);
        }),
    { logger: at.logger },
  );
  // JetStream's default when a consumer was added without one: 30 s.
  const serverAckWait = (await consumer.info(true)).config.ack_wait ?? nanos(30_000);
  if (serverAckWait < nanos(ackWaitMs))
    throw new BusTopologyError(spec.consumer, prefix, [
      {
        kind: 'consumer',
        name,
        problem: 'shorter ack wait',
        have: `${serverAckWait / nanos(1)} ms`,
        want: `${ackWaitMs} ms`,
      },
    ]);
  return consumer;
}
