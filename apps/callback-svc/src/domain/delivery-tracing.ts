import type { ClaimedEvent } from './callback-event';

/** How an attempt ended, as its trace records it. */
export interface AttemptEnd {
  status: 'delivered' | 'pending' | 'dead' | 'postponed';
  /** The receiver's HTTP status; null when none came. */
  httpStatus: number | null;
  /** Why it was not delivered; null when it was. */
  error: string | null;
}

/**
 * The engine's view of tracing: a port, so that the domain knows no tracing library (the transport
 * layer implements it with OpenTelemetry).
 */
export interface DeliveryTracing {
  /**
   * Runs one attempt in a trace that continues the context stored with its event (a trace of its own
   * when there is none); `end` records how it ended. A throw from `run` is recorded as a failure.
   */
  attempt<T>(event: ClaimedEvent, run: (end: (how: AttemptEnd) => void) => Promise<T>): Promise<T>;
  /**
   * Runs background work outside whatever trace is active: loops woken from inside a traced batch
   * (claims, batch writes) must not adopt that trace, nor pass it on to every later round.
   */
  detached<T>(work: () => T): T;
}

/** No tracing at all. */
export const noTracing: DeliveryTracing = {
  attempt: (_event, run) => run(() => undefined),
  detached: (work) => work(),
};
