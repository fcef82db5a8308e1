import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Logger } from '@payments/logger';
import { detached, fromCarrier, recordFailure } from '@payments/telemetry';
import { AttemptRecorder } from './attempt-recorder';
import { targetHostOf, type ClaimedEvent, type NewCallbackEvent } from './callback-event';
import { statusAfter, type EventStore } from './event-store';
import type { HttpDelivery } from './http-delivery';
import { nextRetryDelay, type RetryPolicy } from './retry-policy';
import { signedHeaders } from './signature';

/** Where a tenant's signing secret comes from (the gateway owns tenants). */
export interface SigningSecrets {
  secretFor(tenantId: string): Promise<string>;
}

export interface DeliveryLimits {
  /** Deliveries in flight in this worker. */
  global: number;
  /** Deliveries in flight to one receiving host: a slow or dead ERP cannot take every slot. */
  perHost: number;
  /** How long a claim lasts; longer than the HTTP timeout so a live worker never loses its claim. */
  leaseMs: number;
  /** How often due events are looked for when nothing wakes the engine earlier. */
  pollIntervalMs: number;
}

const tracer = trace.getTracer('@payments/callback-svc');

/** Notified after each attempt (metrics, logs, tests). */
export type AttemptListener = (event: ClaimedEvent, status: 'delivered' | 'pending' | 'dead', error: string | null) => void;

/**
 * Delivers due events: claims as many as it has free slots for (never for a host already at its
 * limit), sends each signed, records the attempt, and schedules the next one. Nothing lives only in
 * memory: a crash leaves claimed rows whose lease runs out, and another worker (or this one after a
 * restart) takes them.
 */
export class DeliveryEngine {
  private readonly inFlightByHost = new Map<string, number>();
  /** Hosts that may have due events this worker had no room for: worth a claim once room frees up. */
  private readonly hostsWithBacklog = new Set<string>();
  /** Whether due events may be waiting because every slot was taken. */
  private backlogBeyondSlots = false;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private wakeAgain = false;
  private readonly recorder: AttemptRecorder;

  constructor(
    private readonly store: EventStore,
    private readonly http: HttpDelivery,
    private readonly secrets: SigningSecrets,
    private readonly policy: RetryPolicy,
    private readonly limits: DeliveryLimits,
    private readonly logger: Logger,
    private readonly onAttempt: AttemptListener = () => undefined,
  ) {
    this.recorder = new AttemptRecorder(store, logger);
  }

  /**
   * Stores newly published events and starts delivering, at once, those this worker has room for;
   * the rest wait in the queue for a free slot (or another worker).
   */
  async accept(events: NewCallbackEvent[]): Promise<void> {
    const claim = new Set<string>();
    let free = this.running ? this.limits.global - this.inFlight.size : 0;
    const hostLoad = new Map(this.inFlightByHost);
    for (const e of events) {
      if (free <= 0) {
        this.backlogBeyondSlots = true;
        break;
      }
      const host = targetHostOf(e.url);
      const load = hostLoad.get(host) ?? 0;
      if (load >= this.limits.perHost) {
        this.hostsWithBacklog.add(host);
        continue;
      }
      hostLoad.set(host, load + 1);
      claim.add(e.eventId);
      free -= 1;
    }
    const claimed = await this.store.ingest(events, claim, this.limits.leaseMs);
    for (const event of claimed) this.dispatch(event);
    if (claimed.length < events.length) this.wake();
  }

  start(): void {
    this.running = true;
    this.wake();
  }

  /** Look for due work now (called when new events arrive or a slot frees up). */
  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.wakeAgain = true;
      return;
    }
    // Detached: wake() is called from inside traced work (a consumed batch, a retry request), which must
    // not adopt the claim queries nor, through the poll timer, every later pump.
    this.pumping = detached(() =>
      this.pump().finally(() => {
        this.pumping = undefined;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        } else this.schedulePoll();
      }),
    );
  }

  /** Stops claiming and waits for deliveries in flight to be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.pumping;
    await Promise.allSettled([...this.inFlight]);
    await this.recorder.flush();
  }

  private schedulePoll(): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), this.limits.pollIntervalMs);
    this.timer.unref();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const free = this.limits.global - this.inFlight.size;
        if (!this.running || free <= 0) return;
        const left = new Map([...this.inFlightByHost].map(([host, n]) => [host, this.limits.perHost - n]));
        const claimed = await this.store.claimDue(free, this.limits.leaseMs, { left, perHost: this.limits.perHost });
        this.noteBacklog(claimed, free, left);
        for (const event of claimed) this.dispatch(event);
        if (claimed.length === 0 || claimed.length < free) return;
      }
    } catch (err) {
      this.logger.error({ err }, 'could not claim due callbacks; will retry');
    }
  }

  /**
   * After a claim: a host that got all its room (or had none) may have more due events, and so may
   * the queue when every free slot was filled. Their deliveries finishing is then a reason to claim.
   */
  private noteBacklog(claimed: ClaimedEvent[], free: number, left: ReadonlyMap<string, number>): void {
    if (claimed.length >= free) this.backlogBeyondSlots = true;
    const taken = new Map<string, number>();
    for (const e of claimed) taken.set(e.targetHost, (taken.get(e.targetHost) ?? 0) + 1);
    for (const [host, n] of left) if (n <= 0) this.hostsWithBacklog.add(host);
    for (const [host, n] of taken) if (n >= (left.get(host) ?? this.limits.perHost)) this.hostsWithBacklog.add(host);
  }

  /**
   * A delivery finished: claim again when that frees a useful share of room where work may be
   * waiting (a quarter of a backlogged host's limit, or of all slots). Claiming costs a query; doing
   * it per finished delivery would cost one per event.
   */
  private wakeIfRoomFreed(host: string): void {
    const hostLoad = this.inFlightByHost.get(host) ?? 0;
    const freeSlots = this.limits.global - this.inFlight.size;
    if (this.hostsWithBacklog.has(host) && this.limits.perHost - hostLoad >= Math.max(1, Math.floor(this.limits.perHost / 4))) {
      this.hostsWithBacklog.delete(host);
      this.wake();
    } else if (this.backlogBeyondSlots && freeSlots >= Math.max(1, Math.floor(this.limits.global / 4))) {
      this.backlogBeyondSlots = false;
      this.wake();
    } else if (this.inFlight.size === 0) this.wake();
  }

  /**
   * Starts one delivery. Its host slot is given back as soon as the POST is answered (the receiver is
   * done with it); its global slot once the attempt is recorded, so that unwritten attempts stay
   * bounded by the global limit.
   */
  private dispatch(event: ClaimedEvent): void {
    this.inFlightByHost.set(event.targetHost, (this.inFlightByHost.get(event.targetHost) ?? 0) + 1);
    let hostReleased = false;
    const releaseHost = () => {
      if (hostReleased) return;
      hostReleased = true;
      const n = (this.inFlightByHost.get(event.targetHost) ?? 1) - 1;
      if (n <= 0) this.inFlightByHost.delete(event.targetHost);
      else this.inFlightByHost.set(event.targetHost, n);
      this.wakeIfRoomFreed(event.targetHost);
    };
    const work = this.deliver(event, releaseHost)
      .catch((err) => this.logger.error({ err, eventId: event.eventId }, 'delivery bookkeeping failed; the lease will expire and it will be retried'))
      .finally(() => {
        this.inFlight.delete(work);
        if (hostReleased) this.wakeIfRoomFreed(event.targetHost);
        else releaseHost();
      });
    this.inFlight.add(work);
  }

  /**
   * One attempt, in a span that is a child of the callback request the event came from (its context is
   * stored with the event), so the attempt and its HTTP POST join the trace of the ERP request behind it.
   */
  private deliver(event: ClaimedEvent, answered: () => void): Promise<void> {
    const attributes = { 'callback.event_id': event.eventId, 'callback.attempt_in_run': event.failuresInRun + 1, 'server.address': event.targetHost };
    return tracer.startActiveSpan('deliver callback', { kind: SpanKind.INTERNAL, attributes }, fromCarrier(event.traceContext), async (span) => {
      try {
        await this.attempt(event, span, answered);
      } catch (err) {
        recordFailure(span, err);
        throw err;
      } finally {
        span.end();
      }
    });
  }

  private async attempt(event: ClaimedEvent, span: Span, answered: () => void): Promise<void> {
    let secret: string;
    try {
      secret = await this.secrets.secretFor(event.tenantId);
    } catch (err) {
      // Not the receiver's fault: no attempt is logged; try again shortly.
      this.logger.warn({ err, eventId: event.eventId, tenantId: event.tenantId }, 'signing secret unavailable; postponing delivery');
      await this.store.postpone(event, new Date(Date.now() + Math.max(1_000, this.limits.pollIntervalMs)));
      span.setAttribute('callback.status', 'postponed');
      return;
    }
    const attemptedAt = new Date();
    const outcome = await this.http.post(event.url, event.body, signedHeaders(secret, event.eventId, event.body, attemptedAt));
    answered();
    if (outcome.refused) this.logger.warn({ eventId: event.eventId, tenantId: event.tenantId, url: event.url, reason: outcome.error }, 'callback URL refused');
    const failures = event.failuresInRun + 1;
    const delay = outcome.ok || outcome.refused ? null : nextRetryDelay(this.policy, failures, outcome.retryAfterMs);
    const retryAt = delay === null ? null : new Date(attemptedAt.getTime() + delay);
    const result = { event, attemptedAt, outcome, retryAt };
    await this.recorder.record(result);
    const status = statusAfter(result);
    span.setAttribute('callback.status', status);
    if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'not delivered' });
    if (status === 'dead') this.logger.warn({ eventId: event.eventId, tenantId: event.tenantId, error: outcome.error }, 'callback dead after its last attempt');
    this.onAttempt(event, status, outcome.error);
  }
}
