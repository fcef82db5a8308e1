import type { JsMsg } from 'nats';

/**
 * Runs `work` while telling JetStream, every third of the ack wait, that `messages` are in progress
 * (`working()`): a live handler keeps its messages however long it runs, a dead one loses them after
 * one ack wait.
 */
export async function whileBeating<T>(
  messages: readonly JsMsg[],
  ackWaitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const beat = keepBeating((each) => messages.forEach(each), ackWaitMs);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

/**
 * Sends an in-progress ack for every message `forEach` visits, every third of the ack wait, until the
 * returned timer is cleared; the timer does not keep the process alive.
 */
export function keepBeating(forEach: (each: (m: JsMsg) => void) => void, ackWaitMs: number): NodeJS.Timeout {
  const beat = setInterval(
    () => {
      try {
        forEach((m) => m.working());
      } catch {
        // The connection is closing: the ack wait runs out and the job goes to another instance.
      }
    },
    Math.max(1, Math.floor(ackWaitMs / 3)),
  );
  beat.unref();
  return beat;
}
