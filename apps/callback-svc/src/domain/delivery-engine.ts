import type { Logger } from '@payments/logger';
import { urlForLog } from '@payments/url-safety';
import { AttemptRecorder } from './attempt-recorder';
import { ClaimReturns } from './claim-returns';
import { noTracing, type AttemptEnd, type DeliveryTracing } from './delivery-tracing';
import { HeldEvents, type ClaimRoom } from './held-events';
import { targetHostOf, type ClaimedEvent, type NewCallbackEvent } from './callback-event';
import { statusAfter, type EventStore } from './event-store';
import type { HttpDelivery } from './http-delivery';
import { nextRetryDelay, type RetryPolicy } from './retry-policy';
import { signedHeaders } from './signature';
import { WorkerLease } from './worker-lease';
import type { WorkerRegistry } from './worker-registry';

/** Where a tenant's signing secrets come from (the gateway owns tenants). */
export interface SigningSecrets {
  /**
   * The secrets that sign the tenant's callbacks now: the current one, then the previous one while a
   * rotation's overlap lasts. Asked at each attempt, so a rotation applies from the next callback.
   */
  secretsFor(tenantId: string): Promise<readonly string[]>;
}

/** How much one worker delivers at once and holds claimed, and how long its claims last (the CALLBACK_* settings). */
export interface DeliveryLimits {
  /** Deliveries in flight in this worker (CALLBACK_CONCURRENCY). */
  readonly concurrency: number;
  /** Deliveries in flight to one receiving host: a slow or dead ERP cannot take every slot (CALLBACK_HOST_CONCURRENCY). */
  readonly hostConcurrency: number;
  /**
   * One tenant's share, in percent, of the deliveries in flight and of the claimed events held
   * (CALLBACK_TENANT_SHARE_PERCENT; default DEFAULT_TENANT_SHARE_PERCENT): its slow or hanging
   * receivers, on any number of hosts, hold no more of the worker than that.
   */
  readonly tenantSharePercent?: number;
  /** Claimed events this worker holds, waiting for a slot or in flight, in all (CALLBACK_MAX_HELD). */
  readonly maxHeld: number;
  /** The same for one receiving host (CALLBACK_MAX_HELD_PER_HOST). */
  readonly maxHeldPerHost: number;
  /**
   * The worker's lease (CALLBACK_LEASE_MS), renewed by a heartbeat: when it lapses (the worker died or
   * was cut off), another worker takes its claims over.
   */
  readonly leaseMs: number;
  /**
   * The HTTP timeout of one attempt (CALLBACK_TIMEOUT_MS). A claim lasts this plus CLAIM_BEYOND_TIMEOUT_MS
   * at most, even while the worker lives; an event is started only with the timeout and a margin left.
   */
  readonly timeoutMs: number;
  /** How often due events are looked for when nothing wakes the engine earlier (CALLBACK_POLL_INTERVAL_MS). */
  readonly pollIntervalMs: number;
}

/** A tenant's share of a worker's slots and hold unless configured: a quarter. */
export const DEFAULT_TENANT_SHARE_PERCENT = 25;

/** A tenant's part of `total` (at least 1): its share of the slots, or of the hold. */
export function tenantShareOf(total: number, percent: number = DEFAULT_TENANT_SHARE_PERCENT): number {
  return Math.max(1, Math.floor((total * percent) / 100));
}

/**
 * How long a claim lasts beyond the attempt timeout, however long the worker lives: a bound for what
 * the worker lease cannot cover (a claim that raced the reap of its lapsed worker). It is also the
 * time a held event may wait for its slot, which sizes each host's hold.
 */
const CLAIM_BEYOND_TIMEOUT_MS = 50_000;
/** Claims at most this many rows per query; a larger room is filled by several. */
const MAX_CLAIM = 1_000;
/**
 * How long a stopping worker keeps trying bookkeeping that Postgres does not take (recording
 * attempts, giving claims back): what is left then ends with the worker's lease.
 */
const STOP_BOOKKEEPING_GRACE_MS = 5_000;
/** Hosts (and tenants) remembered as having a backlog in the queue (see noteBacklogOf). */
const MAX_BACKLOG_HOSTS = 10_000;
/**
 * Margin beyond the attempt timeout an event's lease must still have when it starts (for recording
 * the attempt, and clock skew): 5 s, or half of what the lease has beyond the timeout if less.
 */
function leaseMarginMs(limits: DeliveryLimits): number {
  return Math.min(5_000, Math.max(0, (claimMs(limits) - limits.timeoutMs) / 2));
}

/** How long one claim lasts at most (the row's lease). */
function claimMs(limits: DeliveryLimits): number {
  return limits.timeoutMs + CLAIM_BEYOND_TIMEOUT_MS;
}

/** Notified after each attempt (metrics, logs, tests). */
export type AttemptListener = (
  event: ClaimedEvent,
  status: 'delivered' | 'pending' | 'dead',
  error: string | null,
) => void;

/**
 * What a DeliveryEngine works with, by name (callback-svc's service.ts passes the real ones, tests
 * their fakes).
 */
export interface DeliveryEngineConfig {
  /** The delivery queue in Postgres: events, their claims and attempts. */
  readonly store: EventStore;
  /** The workers' leases in Postgres: this worker's heartbeat, and the reap of lapsed workers' claims. */
  readonly workers: Pick<WorkerRegistry, 'register' | 'renew' | 'retire' | 'reapLapsed'>;
  /** Sends one signed POST to the ERP. */
  readonly http: HttpDelivery;
  /** Each tenant's signing secret. */
  readonly secrets: SigningSecrets;
  /** When a failed delivery is tried again, and when it is dead. */
  readonly retry: RetryPolicy;
  /** Deliveries at once, claimed events held, claim lease. */
  readonly limits: DeliveryLimits;
  readonly logger: Logger;
  /** Called after each attempt (metrics, tests). Default: nothing. */
  readonly onAttempt?: AttemptListener;
  /** Traces each attempt as part of the request it came from. Default: no tracing. */
  readonly tracing?: DeliveryTracing;
}

/**
 * Delivers due events. New events are claimed as they are stored, as many as this worker may hold;
 * older ones (retries, and what no worker had room for) are claimed from the queue when room frees
 * up. Claimed events wait in memory for a slot (limits in all, per tenant and per host), are sent signed, and
 * their attempts recorded with the next step of their schedule. Nothing lives only in memory: a
 * crash leaves claimed rows naming a worker whose lease lapses within CALLBACK_LEASE_MS, and another
 * worker (or this one after a restart) takes them over.
 */
export class DeliveryEngine {
  private readonly held: HeldEvents;
  /** Hosts that may have due events in the queue that this worker had no room to claim. */
  private readonly hostsWithBacklog = new Set<string>();
  /** The same for tenants. */
  private readonly tenantsWithBacklog = new Set<string>();
  /** Whether due events may wait in the queue because this worker held all it may. */
  private backlogBeyondRoom = false;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private wakeAgain = false;
  private readonly recorder: AttemptRecorder;
  /** Claims given back unused, tried again while Postgres is away. */
  private readonly returns: ClaimReturns;
  /** When failing bookkeeping is given up: once stopping, after STOP_BOOKKEEPING_GRACE_MS. */
  private giveUpBookkeepingAt = Infinity;
  private readonly lease: WorkerLease;
  private readonly workers: DeliveryEngineConfig['workers'];
  private lastReapAt = 0;

  private readonly store: EventStore;
  private readonly http: HttpDelivery;
  private readonly secrets: SigningSecrets;
  private readonly retry: RetryPolicy;
  private readonly limits: DeliveryLimits;
  private readonly logger: Logger;
  private readonly onAttempt: AttemptListener;
  private readonly tracing: DeliveryTracing;

  constructor(config: DeliveryEngineConfig) {
    this.store = config.store;
    this.workers = config.workers;
    this.http = config.http;
    this.secrets = config.secrets;
    this.retry = config.retry;
    this.limits = config.limits;
    this.logger = config.logger;
    this.onAttempt = config.onAttempt ?? (() => undefined);
    this.tracing = config.tracing ?? noTracing;
    const { limits } = config;
    const giveUp = () => Date.now() >= this.giveUpBookkeepingAt;
    this.recorder = new AttemptRecorder({ store: this.store, logger: this.logger, tracing: this.tracing, giveUp });
    this.returns = new ClaimReturns({ store: this.store, logger: this.logger, tracing: this.tracing, giveUp });
    this.held = new HeldEvents({
      concurrency: limits.concurrency,
      tenantConcurrency: tenantShareOf(limits.concurrency, limits.tenantSharePercent),
      hostConcurrency: limits.hostConcurrency,
      maxHeld: limits.maxHeld,
      maxHeldPerTenant: tenantShareOf(limits.maxHeld, limits.tenantSharePercent),
      maxHeldPerHost: limits.maxHeldPerHost,
      minLeaseLeftMs: limits.timeoutMs + leaseMarginMs(limits),
      maxWaitMs: claimMs(limits) - limits.timeoutMs - leaseMarginMs(limits),
    });
    this.lease = new WorkerLease({
      store: config.workers,
      leaseMs: limits.leaseMs,
      logger: this.logger,
      onLapse: () => this.dropHeld(),
    });
  }

  /**
   * Stores newly published events, claiming those this worker has room to hold, and starts what it
   * can at once; the rest wait in the queue for room here or another worker.
   */
  async accept(events: NewCallbackEvent[]): Promise<void> {
    const claim = new Set<string>();
    const workerId = this.lease.claimingAs;
    if (this.running && workerId) {
      const room = this.held.claimRoom();
      for (const e of events) {
        const host = targetHostOf(e.url);
        const left = room.left.get(host) ?? room.perHost;
        const tenantLeft = room.tenantLeft.get(e.tenantId) ?? room.perTenant;
        if (room.total <= 0) this.backlogBeyondRoom = true;
        else if (left <= 0) this.noteBacklogOf(this.hostsWithBacklog, host);
        else if (tenantLeft <= 0) this.noteBacklogOf(this.tenantsWithBacklog, e.tenantId);
        else {
          claim.add(e.eventId);
          room.left.set(host, left - 1);
          room.tenantLeft.set(e.tenantId, tenantLeft - 1);
          room.total -= 1;
        }
      }
    }
    const leaseEndsAt = Date.now() + claimMs(this.limits); // taken before the insert: never later than the row's
    const claimed = await this.store.ingest(events, claim, claimMs(this.limits), workerId ?? null);
    for (const event of claimed) this.held.hold(event, leaseEndsAt);
    this.startWaiting();
    if (claim.size < events.length) this.wake();
  }

  /** Claimed events held now: waiting for a slot, or in flight. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Receiving hosts remembered as failing. */
  get failingHostCount(): number {
    return this.held.failingHostCount;
  }

  /** Registers this worker's lease (its heartbeat runs until stop) and starts claiming. */
  async start(): Promise<void> {
    await this.lease.start();
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
    this.pumping = this.tracing.detached(() =>
      this.pump().finally(() => {
        this.pumping = undefined;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        } else this.schedulePoll();
      }),
    );
  }

  /**
   * Stops claiming, gives the claims of events not started back to the queue (another worker takes
   * them at once, not when their lease ends), and waits for deliveries in flight to be recorded. With
   * Postgres away, bookkeeping is tried for STOP_BOOKKEEPING_GRACE_MS more; what is left then ends
   * with the worker's lease.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.giveUpBookkeepingAt = Date.now() + STOP_BOOKKEEPING_GRACE_MS;
    clearTimeout(this.timer);
    await this.pumping;
    void this.returns.giveBack(this.held.drainWaiting());
    await Promise.allSettled([...this.inFlight]);
    await this.recorder.flush();
    await this.returns.flush();
    await this.lease
      .stop()
      .catch((err: unknown) =>
        this.logger.warn({ err }, 'could not end the worker lease; it lapses within CALLBACK_LEASE_MS'),
      );
  }

  /**
   * The lease lapsed: the waiting events' claims may belong to another worker now, so they are dropped
   * (and given back, if they are still ours); whatever is due is claimed again under the new lease.
   */
  private dropHeld(): void {
    this.backlogBeyondRoom = true;
    void this.returns.giveBack(this.held.drainWaiting());
  }

  /**
   * Gives the claims of lapsed workers (killed, stalled, cut off) back to the queue, at most once per
   * poll interval, so that this worker or another claims them now.
   */
  private async reapLapsedWorkers(): Promise<void> {
    if (Date.now() - this.lastReapAt < this.limits.pollIntervalMs) return;
    this.lastReapAt = Date.now();
    const reaped = await this.workers.reapLapsed();
    if (reaped.workers > 0)
      this.logger.info(reaped, 'took over the callbacks of lapsed workers (their lease ended without a stop)');
  }

  private schedulePoll(): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), this.limits.pollIntervalMs);
    this.timer.unref();
  }

  private async pump(): Promise<void> {
    try {
      await this.reapLapsedWorkers();
      for (;;) {
        const room = this.held.claimRoom();
        const limit = Math.min(room.total, MAX_CLAIM);
        const workerId = this.lease.claimingAs;
        if (!this.running || limit <= 0 || !workerId) return;
        const leaseEndsAt = Date.now() + claimMs(this.limits);
        const claimed = await this.store.claimDue(limit, claimMs(this.limits), room, workerId);
        for (const event of claimed) this.held.hold(event, leaseEndsAt);
        this.noteBacklog(claimed, limit, room);
        this.startWaiting();
        if (claimed.length < limit) return;
      }
    } catch (err) {
      this.logger.error({ err }, 'could not claim due callbacks; will retry');
    }
  }

  /**
   * After a claim: a host or tenant that got all its room (or had none) may have more due events, and
   * so may the queue when the claim took all it asked for. Room freeing up there is then a reason to
   * claim.
   */
  private noteBacklog(claimed: ClaimedEvent[], limit: number, room: ClaimRoom): void {
    if (claimed.length >= limit) this.backlogBeyondRoom = true;
    const noteFull = (
      backlog: Set<string>,
      keyOf: (e: ClaimedEvent) => string,
      left: ReadonlyMap<string, number>,
      per: number,
    ) => {
      const taken = new Map<string, number>();
      for (const e of claimed) taken.set(keyOf(e), (taken.get(keyOf(e)) ?? 0) + 1);
      for (const [key, n] of left) if (n <= 0) this.noteBacklogOf(backlog, key);
      for (const [key, n] of taken) if (n >= (left.get(key) ?? per)) this.noteBacklogOf(backlog, key);
    };
    noteFull(this.hostsWithBacklog, (e) => e.targetHost, room.left, room.perHost);
    noteFull(this.tenantsWithBacklog, (e) => e.tenantId, room.tenantLeft, room.perTenant);
  }

  /**
   * Remembers that a host (or tenant) may have due events waiting in the queue. Bounded: past
   * MAX_BACKLOG_HOSTS of them (thousands of distinct receivers), the set gives way to one flag that
   * claims again as soon as a quarter of the whole hold is free.
   */
  private noteBacklogOf(backlog: Set<string>, key: string): void {
    if (backlog.size >= MAX_BACKLOG_HOSTS && !backlog.has(key)) {
      backlog.clear();
      this.backlogBeyondRoom = true;
    }
    backlog.add(key);
  }

  /** Starts the held events that have a slot now. */
  private startWaiting(): void {
    // A lapsed lease: what waits may be another worker's now (dropHeld empties it).
    if (!this.lease.holds) return;
    const { start, expired } = this.held.takeStartable();
    if (expired.length > 0) {
      // Given back (due now) rather than left until their lease ends: whoever claims them delivers them.
      this.logger.warn(
        { count: expired.length },
        'held callbacks dropped near the end of their lease; they will be claimed again',
      );
      for (const e of expired) this.noteBacklogOf(this.hostsWithBacklog, e.targetHost);
      void this.returns.giveBack(expired);
    }
    for (const event of start) this.dispatch(event);
  }

  /**
   * Room freed up: claim again when a useful share of it is free where work may wait in the queue (a
   * quarter of a backlogged host's or tenant's hold, or of the whole hold). Claiming costs a query;
   * doing it per finished delivery would cost one per event.
   */
  private wakeIfRoomFreed(event: ClaimedEvent): void {
    // Runs twice per delivery: only this host's, tenant's and the overall room, not every host's.
    const host = event.targetHost;
    const tenant = event.tenantId;
    if (
      this.hostsWithBacklog.has(host) &&
      this.held.roomFor(host) >= Math.max(1, Math.floor(this.held.heldLimitFor(host) / 4))
    ) {
      this.hostsWithBacklog.delete(host);
      this.wake();
    } else if (
      this.tenantsWithBacklog.has(tenant) &&
      this.held.roomForTenant(tenant) >= Math.max(1, Math.floor(this.held.heldLimitForTenant(tenant) / 4))
    ) {
      this.tenantsWithBacklog.delete(tenant);
      this.wake();
    } else if (this.backlogBeyondRoom && this.held.totalRoom() >= Math.max(1, Math.floor(this.limits.maxHeld / 4))) {
      this.backlogBeyondRoom = false;
      this.wake();
    } else if (this.held.size === 0) this.wake();
  }

  /**
   * Starts one delivery. Its host slot is given back as soon as the POST is answered (the receiver is
   * done with it); its global slot once the attempt is recorded, so that unwritten attempts stay
   * bounded by the global limit.
   */
  private dispatch(event: ClaimedEvent): void {
    const host = event.targetHost;
    let answered = false;
    const onAnswer = (ok?: boolean) => {
      if (answered) return;
      answered = true;
      this.held.answered(host, ok);
      this.startWaiting();
      this.wakeIfRoomFreed(event);
    };
    const work = this.deliver(event, onAnswer)
      .catch((err) =>
        this.logger.error(
          { err, eventId: event.eventId },
          'delivery failed unexpectedly; its claim ends with the lease and it will be retried',
        ),
      )
      .finally(() => {
        this.inFlight.delete(work);
        onAnswer();
        this.held.finished(event);
        this.startWaiting();
        this.wakeIfRoomFreed(event);
      });
    this.inFlight.add(work);
  }

  /** One attempt, traced as part of the ERP request the event came from. */
  private deliver(event: ClaimedEvent, answered: (ok?: boolean) => void): Promise<void> {
    return this.tracing.attempt(event, (end) => this.attempt(event, end, answered));
  }

  /**
   * Gives the claim back, due shortly. When Postgres is away too (the gateway cannot read the secret
   * for the same reason), it goes with the other claims given back, due at once, in the first write
   * Postgres takes (after the outage, so "shortly" has passed). The event keeps its global slot until
   * then, as an unrecorded attempt does.
   */
  private async postpone(event: ClaimedEvent): Promise<void> {
    try {
      await this.store.postpone(event, new Date(Date.now() + Math.max(1_000, this.limits.pollIntervalMs)));
    } catch {
      await this.returns.giveBack([event]);
    }
  }

  private async attempt(
    event: ClaimedEvent,
    end: (how: AttemptEnd) => void,
    answered: (ok?: boolean) => void,
  ): Promise<void> {
    let secrets: readonly string[];
    try {
      secrets = await this.secrets.secretsFor(event.tenantId);
    } catch (err) {
      // Not the receiver's fault: no attempt is logged; try again shortly.
      this.logger.warn(
        { err, eventId: event.eventId, tenantId: event.tenantId },
        'signing secret unavailable; postponing delivery',
      );
      answered(); // the receiver was never called
      await this.postpone(event);
      end({ status: 'postponed', httpStatus: null, error: null });
      return;
    }
    const attemptedAt = new Date();
    const outcome = await this.http.post(
      event.url,
      event.body,
      signedHeaders(secrets, event.eventId, event.body, attemptedAt),
    );
    answered(outcome.ok || outcome.refused);
    if (outcome.refused)
      this.logger.warn(
        // Without its query string: tenants put tokens there (urlForLog).
        { eventId: event.eventId, tenantId: event.tenantId, url: urlForLog(event.url), reason: outcome.error },
        'callback URL refused',
      );
    const failures = event.failuresInRun + 1;
    const delay = outcome.ok || outcome.refused ? null : nextRetryDelay(this.retry, failures, outcome.retryAfterMs);
    const retryAt = delay === null ? null : new Date(attemptedAt.getTime() + delay);
    const result = { event, attemptedAt, outcome, retryAt };
    const recorded = await this.recorder.record(result);
    const status = statusAfter(result);
    end({ status, httpStatus: outcome.statusCode, error: outcome.ok ? null : (outcome.error ?? 'not delivered') });
    if (recorded !== 'written') {
      // Stale: this worker's lease ran out and a later claim owns the event, whose outcome stands.
      if (recorded === 'stale')
        this.logger.warn(
          { eventId: event.eventId, tenantId: event.tenantId, ok: outcome.ok },
          'attempt outcome left out: the event was claimed again after this lease ran out',
        );
      return;
    }
    if (status === 'dead')
      this.logger.warn(
        { eventId: event.eventId, tenantId: event.tenantId, error: outcome.error },
        'callback dead after its last attempt',
      );
    this.onAttempt(event, status, outcome.error);
  }
}
