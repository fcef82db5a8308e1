import { LRUCache } from 'lru-cache';
import type { ClaimedEvent } from './callback-event';

export interface HoldLimits {
  /** Deliveries in flight at once, in all, until their attempt is recorded (CALLBACK_CONCURRENCY). */
  readonly concurrency: number;
  /** Deliveries in flight at once to one receiving host, until it answers (CALLBACK_HOST_CONCURRENCY). */
  readonly hostConcurrency: number;
  /** Claimed events held by this worker, waiting or in flight, in all (CALLBACK_MAX_HELD). */
  readonly maxHeld: number;
  /**
   * Claimed events held for one host at most (CALLBACK_MAX_HELD_PER_HOST; see heldLimitFor: a slow or
   * failing host gets fewer).
   */
  readonly maxHeldPerHost: number;
  /** An event is started only with at least this much of its lease left (the POST timeout and a margin). */
  readonly minLeaseLeftMs: number;
  /** How long a claimed event may wait for its slot: the lease less minLeaseLeftMs. */
  readonly maxWaitMs: number;
}

/** Answers are counted over windows this long to estimate each host's pace. */
const PACE_WINDOW_MS = 5_000;
/**
 * A host whose last attempt failed keeps its smaller hold while idle, for this long since it last
 * failed; at most this many such hosts are remembered (the least recently failed go first). So
 * 10,000 dead receivers cost a bounded table, not one entry each for ever.
 */
const FAILING_HOST_TTL_MS = 10 * 60_000;
const MAX_FAILING_HOSTS = 10_000;

/** Room for more claims: in all, and for each host that already holds something (others have `perHost`). */
export interface ClaimRoom {
  total: number;
  left: Map<string, number>;
  perHost: number;
}

interface HostState {
  waiting: Array<{ event: ClaimedEvent; leaseEndsAt: number }>;
  inFlight: number;
  /** Answers per second over the last full window that had a backlog; null when not measured. */
  pace: number | null;
  windowStart: number;
  answersInWindow: number;
}

/**
 * The events this worker has claimed and not finished: per host, those waiting for a slot (oldest
 * first) and those in flight. Holding claimed events in memory lets one claim (at ingest, mostly)
 * serve a backlog: a row claimed again for every few deliveries costs Postgres a new row version and
 * an entry in each index. Nothing is lost with the process: a held event's row stays claimed only
 * until its lease ends, and an event too close to that end is dropped instead of started (its row
 * comes due again and is claimed anew, here or elsewhere).
 */
export class HeldEvents {
  /** Hosts with events waiting or in flight; an idle host is forgotten. */
  private readonly hosts = new Map<string, HostState>();
  private readonly failing: LRUCache<string, true>;
  /** Started and not yet finished (recorded), in all hosts. */
  private running = 0;
  private waitingCount = 0;

  constructor(
    private readonly limits: HoldLimits,
    private readonly now: () => number = Date.now,
  ) {
    // ttlResolution 0: read the clock at each check (the default caches it for 1 ms with a timer).
    this.failing = new LRUCache({ max: MAX_FAILING_HOSTS, ttl: FAILING_HOST_TTL_MS, ttlResolution: 0, perf: { now } });
  }

  /** Failing hosts remembered (idle or not): bounded by MAX_FAILING_HOSTS, each for FAILING_HOST_TTL_MS. */
  get failingHostCount(): number {
    this.failing.purgeStale();
    return this.failing.size;
  }

  /** Events held in all: waiting and running. */
  get size(): number {
    return this.waitingCount + this.running;
  }

  /** How many more may be claimed, in all and per host. */
  claimRoom(): ClaimRoom {
    const left = new Map<string, number>();
    for (const [host] of this.hosts) left.set(host, this.roomFor(host));
    for (const host of this.failing.keys()) if (!left.has(host)) left.set(host, this.roomFor(host));
    return { total: this.totalRoom(), left, perHost: this.limits.maxHeldPerHost };
  }

  /** How many more may be claimed for one host (ignoring the limit in all). */
  roomFor(host: string): number {
    return Math.max(0, this.heldLimitFor(host) - this.heldFor(host));
  }

  /** How many more may be claimed in all. */
  totalRoom(): number {
    return Math.max(0, this.limits.maxHeld - this.size);
  }

  /** Holds a freshly claimed event until it can start. */
  hold(event: ClaimedEvent, leaseEndsAt: number): void {
    this.host(event.targetHost).waiting.push({ event, leaseEndsAt });
    this.waitingCount += 1;
  }

  /**
   * The waiting events that may start now, counted as in flight; hosts take turns, so one with a long
   * queue does not take every free slot. Also returns events dropped for want of lease.
   */
  takeStartable(): { start: ClaimedEvent[]; expired: ClaimedEvent[] } {
    const start: ClaimedEvent[] = [];
    const expired: ClaimedEvent[] = [];
    const now = this.now();
    let progressed = true;
    while (progressed && this.running < this.limits.concurrency) {
      progressed = false;
      for (const [host, state] of this.hosts) {
        if (this.running >= this.limits.concurrency) break;
        if (state.inFlight >= this.limits.hostConcurrency) continue;
        let next = state.waiting.shift();
        while (next && next.leaseEndsAt - now < this.limits.minLeaseLeftMs) {
          this.waitingCount -= 1;
          expired.push(next.event);
          next = state.waiting.shift();
        }
        if (!next) {
          this.forgetIfIdle(host, state);
          continue;
        }
        this.waitingCount -= 1;
        state.inFlight += 1;
        this.running += 1;
        start.push(next.event);
        progressed = true;
      }
    }
    return { start, expired };
  }

  /**
   * The host answered (or could not be reached): its slot is free. `ok` tells whether it is healthy;
   * undefined when the attempt never reached it.
   */
  answered(host: string, ok?: boolean): void {
    const state = this.hosts.get(host);
    if (!state) return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    if (ok === false) this.failing.set(host, true);
    else if (ok) this.failing.delete(host);
    state.answersInWindow += 1;
    const elapsed = this.now() - state.windowStart;
    if (elapsed >= PACE_WINDOW_MS) {
      // Only a window that ended with events waiting measured what the host can take; otherwise the
      // answers only say how many there were to send.
      state.pace = state.waiting.length > 0 ? (state.answersInWindow * 1000) / elapsed : null;
      state.windowStart = this.now();
      state.answersInWindow = 0;
    }
  }

  /** The attempt is recorded: its global slot is free. */
  finished(host: string): void {
    this.running = Math.max(0, this.running - 1);
    const state = this.hosts.get(host);
    if (state) this.forgetIfIdle(host, state);
  }

  /** Takes every waiting event out (on shutdown, to give their claims back). */
  drainWaiting(): ClaimedEvent[] {
    const events: ClaimedEvent[] = [];
    for (const state of this.hosts.values()) events.push(...state.waiting.splice(0).map((w) => w.event));
    this.waitingCount = 0;
    return events;
  }

  /** Waiting and in flight (not answered) for a host. */
  heldFor(host: string): number {
    const state = this.hosts.get(host);
    return state ? state.waiting.length + state.inFlight : 0;
  }

  /**
   * How many events a host may hold: what it answers within the time an event may wait (so that held
   * events start before their lease runs short), at least 4 times its in-flight limit (hostConcurrency),
   * at most maxHeldPerHost. A host not yet measured gets maxHeldPerHost; one whose last attempt failed,
   * twice its in-flight limit.
   */
  heldLimitFor(host: string): number {
    const state = this.hosts.get(host);
    const { maxHeldPerHost, hostConcurrency, maxWaitMs } = this.limits;
    if (this.failing.has(host)) return Math.min(maxHeldPerHost, 2 * hostConcurrency);
    if (!state || state.pace === null) return maxHeldPerHost;
    return Math.min(maxHeldPerHost, Math.max(4 * hostConcurrency, Math.floor((state.pace * maxWaitMs) / 1000)));
  }

  private host(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { waiting: [], inFlight: 0, pace: null, windowStart: this.now(), answersInWindow: 0 };
      this.hosts.set(host, state);
    }
    return state;
  }

  private forgetIfIdle(host: string, state: HostState): void {
    // A failing host's smaller limit outlives this (see `failing`); its pace is measured anew.
    if (state.waiting.length === 0 && state.inFlight === 0) this.hosts.delete(host);
  }
}
