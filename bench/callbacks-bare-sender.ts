/**
 * The baseline of bench/callbacks, in its own process as callback-svc is in its own: POSTs to the
 * receiver with undici through an Agent set up as callback-svc's delivery sets up its own
 * (apps/callback-svc/src/transport/undici-http-delivery.ts), as many at a time as the service sends to
 * one host (CALLBACK_HOST_CONCURRENCY), with the service's body and header set. Nothing else: no
 * queue, database, bus or signing (the signature header is a constant of the right length).
 *
 * Driven by bench/callbacks.ts over the IPC channel: it sends a BareSenderJob; this process warms up
 * (connections, JIT), answers 'ready', waits for 'go', sends `events` POSTs with distinct webhook-ids
 * and answers 'sent'. The rate is timed at the receiver, by distinct webhook-id, as the service's is.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';

export interface BareSenderJob {
  url: string;
  events: number;
  warmUpEvents: number;
  /** In flight at once: the service's per-host limit (CALLBACK_HOST_CONCURRENCY). */
  concurrency: number;
  /** CALLBACK_TIMEOUT_MS: the service's connect, headers and body timeouts. */
  timeoutMs: number;
  body: string;
}

/** Agent options as createHttpDelivery sets them (pipelining left at undici's default of 1, as there). */
function agentLikeTheService(timeoutMs: number): Agent {
  return new Agent({
    connect: { timeout: timeoutMs },
    keepAliveTimeout: 10_000,
    connections: 64,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

// Same length as a real `v1,<base64 HMAC-SHA256>` header.
const SIGNATURE = `v1,${Buffer.alloc(32, 7).toString('base64')}`;

async function send(agent: Agent, job: BareSenderJob, events: number): Promise<void> {
  const { origin, pathname, search } = new URL(job.url);
  const path = `${pathname}${search}`;
  let next = 0;
  const worker = async () => {
    while (next < events) {
      next += 1;
      const response = await agent.request({
        origin,
        path,
        method: 'POST',
        body: job.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'payments-callbacks/1',
          'webhook-id': `evt_${randomUUID().replace(/-/g, '')}`,
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': SIGNATURE,
        },
      });
      await response.body.dump();
      if (response.statusCode < 200 || response.statusCode >= 300)
        throw new Error(`receiver answered ${response.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
}

process.once('message', (job: BareSenderJob) => {
  const agent = agentLikeTheService(job.timeoutMs);
  void (async () => {
    await send(agent, job, job.warmUpEvents);
    process.once('message', () => {
      send(agent, job, job.events).then(
        () => process.send!('sent'),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
    });
    process.send!('ready');
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
  process.once('disconnect', () => void agent.close().then(() => process.exit(0)));
});
