import { LRUCache } from 'lru-cache';
import type { ClaimedEvent } from './callback-event';

export interface HoldLimits {
  /** Deliveries in flight at once, in all, until their attempt is recorded (CALLBACK_CONCURRENCY). */
  readonly concurrency: number;
  /**
   * Deliveries in flight at once for one tenant, until their attempt is recorded: its share of
   * `concurrency` (CALLBACK_TENANT_SHARE_PERCENT). Never exceeded, even when no other tenant waits: a
   * slot given to a hanging receiver cannot be taken back before the attempt's deadline, so another
   * tenant's callbacks find slots free the moment they arrive.
   */
  readonly tenantConcurrency: number;
  /** Deliveries in flight at once to one receiving host, until it answers (CALLBACK_HOST_CONCURRENCY). */
  readonly hostConcurrency: number;
  /** Claimed events held by this worker, waiting or in flight, in all (CALLBACK_MAX_HELD). */
  readonly maxHeld: number;
  /** The same for one tenant: its share of maxHeld, so that its backlog leaves room to claim others'. */
  readonly maxHeldPerTenant: number;
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

/** Answers are counted over windows this long to estimate each host's and tenant's pace. */
const PACE_WINDOW_MS = 5_000;

/** How many answers a host, or finished attempts a tenant, gets through per second while it has a backlog. */
class Pace {
  /** Over the last full window that had a backlog; null when not measured. */
  private perSecond: number | null = null;
  private answers = 0;

  constructor(private windowStart: number) {}

  /** One more answer at `now`; `backlog`: whether events still wait for a slot. */
  note(now: number, backlog: boolean): void {
    this.answers += 1;
    const elapsed = now - this.windowStart;
    if (elapsed < PACE_WINDOW_MS) return;
    // Only a window that ended with events waiting measured what could be taken; otherwise the
    // answers only say how many there were to send.
    this.perSecond = backlog ? (this.answers * 1000) / elapsed : null;
    this.windowStart = now;
    this.answers = 0;
  }

  /** How many get through in `waitMs` at this pace, between `floor` and `max`; `max` when not measured. */
  within(waitMs: number, floor: number, max: number): number {
    if (this.perSecond === null) return max;
    return Math.min(max, Math.max(floor, Math.floor((this.perSecond * waitMs) / 1000)));
  }
}
/**
 * A host whose last attempt failed keeps its smaller hold while idle, for this long since it last
 * failed; at most this many such hosts are remembered (the least recently failed go first). So
 * 10,000 dead receivers cost a bounded table, not one entry each for ever.
 */
const FAILING_HOST_TTL_MS = 10 * 60_000;
const MAX_FAILING_HOSTS = 10_000;

/**
 * Room for more claims: in all; for each host that already holds something (others have `perHost`);
 * for each tenant that holds something (others have `perTenant`).
 */
export interface ClaimRoom {
  total: number;
  left: Map<string, number>;
  perHost: number;
  tenantLeft: Map<string, number>;
  perTenant: number;
}

interface Waiting {
  event: ClaimedEvent;
  leaseEndsAt: number;
}

interface HostState {
  /** Events waiting for this host, in all tenants' lanes. */
  waiting: number;
  inFlight: number;
  pace: Pace;
}

interface TenantState {
  /** One lane per host: the tenant's events for it waiting for a slot, oldest first. */
  lanes: Map<string, Waiting[]>;
  waiting: number;
  /** Started and not yet finished (recorded). */
  running: number;
  pace: Pace;
}

/**
 * The events this worker has claimed and not finished, in lanes by tenant and host: those waiting for
 * a slot (oldest first) and those in flight. Slots go to tenants in turn, each up to its share, and
 * within a tenant to its hosts in turn, each up to the host limit; so one tenant's slow or hanging
 * receivers, on any number of hosts, hold its share and no more. Holding claimed events in memory
 * lets one claim (at ingest, mostly) serve a backlog: a row claimed again for every few deliveries
 * costs Postgres a new row version and an entry in each index. Nothing is lost with the process: a
 * held event's row stays claimed only until its lease ends, and an event too close to that end is
 * dropped instead of started (its row comes due again and is claimed anew, here or elsewhere).
 */
export class HeldEvents {
  /** Tenants with events waiting or in flight, in turn order; an idle tenant is forgotten. */
  private readonly tenants = new Map<string, TenantState>();
  /** Hosts with events waiting or in flight; an idle host is forgotten. */
  private readonly hosts = new Map<string, HostState>();
  private readonly failing: LRUCache<string, true>;
  /** Started and not yet finished (recorded), in all tenants. */
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

  /** How many more may be claimed, in all, per host and per tenant. */
  claimRoom(): ClaimRoom {
    const left = new Map<string, number>();
    for (const [host] of this.hosts) left.set(host, this.roomFor(host));
    for (const host of this.failing.keys()) if (!left.has(host)) left.set(host, this.roomFor(host));
    const tenantLeft = new Map<string, number>();
    for (const [tenant] of this.tenants) tenantLeft.set(tenant, this.roomForTenant(tenant));
    return {
      total: this.totalRoom(),
      left,
      perHost: this.limits.maxHeldPerHost,
      tenantLeft,
      perTenant: this.limits.maxHeldPerTenant,
    };
  }

  /** How many more may be claimed for one host (ignoring the limits in all and per tenant). */
  roomFor(host: string): number {
    return Math.max(0, this.heldLimitFor(host) - this.heldFor(host));
  }

  /** How many more may be claimed for one tenant (ignoring the limits in all and per host). */
  roomForTenant(tenant: string): number {
    const state = this.tenants.get(tenant);
    return Math.max(0, this.heldLimitForTenant(tenant) - (state ? state.waiting + state.running : 0));
  }

  /**
   * How many events a tenant may hold: as for a host (heldLimitFor), what it gets through within the
   * time an event may wait, at least 4 times its share of the slots, at most maxHeldPerTenant. Its
   * slow receivers then hold what its share can start, not events that wait until their lease runs
   * short.
   */
  heldLimitForTenant(tenant: string): number {
    const { maxHeldPerTenant, tenantConcurrency, maxWaitMs } = this.limits;
    const state = this.tenants.get(tenant);
    if (!state) return maxHeldPerTenant;
    return state.pace.within(maxWaitMs, 4 * tenantConcurrency, maxHeldPerTenant);
  }

  /** How many more may be claimed in all. */
  totalRoom(): number {
    return Math.max(0, this.limits.maxHeld - this.size);
  }

  /** Holds a freshly claimed event until it can start. */
  hold(event: ClaimedEvent, leaseEndsAt: number): void {
    const tenant = this.tenant(event.tenantId);
    let lane = tenant.lanes.get(event.targetHost);
    if (!lane) {
      lane = [];
      tenant.lanes.set(event.targetHost, lane);
    }
    lane.push({ event, leaseEndsAt });
    tenant.waiting += 1;
    this.host(event.targetHost).waiting += 1;
    this.waitingCount += 1;
  }

  /**
   * The waiting events that may start now, counted as in flight. Tenants take turns, one event each
   * per round while they are under their share; within a tenant, its hosts take turns. Also returns
   * events dropped for want of lease.
   */
  takeStartable(): { start: ClaimedEvent[]; expired: ClaimedEvent[] } {
    const start: ClaimedEvent[] = [];
    const expired: ClaimedEvent[] = [];
    let progressed = true;
    while (progressed && this.running < this.limits.concurrency) {
      progressed = false;
      // A snapshot: a tenant that starts one goes to the back of the turn order for the next round.
      for (const [id, tenant] of [...this.tenants]) {
        if (this.running >= this.limits.concurrency) break;
        if (tenant.running >= this.limits.tenantConcurrency) continue;
        const event = this.takeFromTenant(tenant, expired);
        if (!event) {
          this.forgetTenantIfIdle(id, tenant);
          continue;
        }
        tenant.running += 1;
        this.running += 1;
        this.tenants.delete(id);
        this.tenants.set(id, tenant);
        start.push(event);
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
    state.pace.note(this.now(), state.waiting > 0);
  }

  /** The attempt is recorded: its slots in all and of its tenant are free. */
  finished(event: Pick<ClaimedEvent, 'tenantId' | 'targetHost'>): void {
    this.running = Math.max(0, this.running - 1);
    const tenant = this.tenants.get(event.tenantId);
    if (tenant) {
      tenant.running = Math.max(0, tenant.running - 1);
      tenant.pace.note(this.now(), tenant.waiting > 0);
      this.forgetTenantIfIdle(event.tenantId, tenant);
    }
    const state = this.hosts.get(event.targetHost);
    if (state) this.forgetHostIfIdle(event.targetHost, state);
  }

  /** Takes every waiting event out (on shutdown, to give their claims back). */
  drainWaiting(): ClaimedEvent[] {
    const events: ClaimedEvent[] = [];
    for (const [id, tenant] of this.tenants) {
      for (const lane of tenant.lanes.values()) events.push(...lane.map((w) => w.event));
      tenant.lanes.clear();
      tenant.waiting = 0;
      this.forgetTenantIfIdle(id, tenant);
    }
    for (const [host, state] of this.hosts) {
      state.waiting = 0;
      this.forgetHostIfIdle(host, state);
    }
    this.waitingCount = 0;
    return events;
  }

  /** Waiting and in flight (not answered) for a host, in all tenants. */
  heldFor(host: string): number {
    const state = this.hosts.get(host);
    return state ? state.waiting + state.inFlight : 0;
  }

  /** Started and not yet finished for a tenant. */
  runningFor(tenant: string): number {
    return this.tenants.get(tenant)?.running ?? 0;
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
    if (!state) return maxHeldPerHost;
    return state.pace.within(maxWaitMs, 4 * hostConcurrency, maxHeldPerHost);
  }

  /**
   * The next event of a tenant's lanes that may start (its host under the host limit), taking the
   * lanes in turn; drops the events in front of it that are too close to the end of their lease.
   */
  private takeFromTenant(tenant: TenantState, expired: ClaimedEvent[]): ClaimedEvent | undefined {
    const now = this.now();
    for (const [host, lane] of tenant.lanes) {
      const state = this.host(host);
      if (state.inFlight >= this.limits.hostConcurrency) continue;
      let next = lane.shift();
      while (next && next.leaseEndsAt - now < this.limits.minLeaseLeftMs) {
        this.leftWaiting(tenant, state);
        expired.push(next.event);
        next = lane.shift();
      }
      // Taken or emptied, the lane goes to the back: the tenant's other hosts come first next time.
      tenant.lanes.delete(host);
      if (lane.length > 0) tenant.lanes.set(host, lane);
      if (!next) {
        this.forgetHostIfIdle(host, state);
        continue;
      }
      this.leftWaiting(tenant, state);
      state.inFlight += 1;
      return next.event;
    }
    return undefined;
  }

  private leftWaiting(tenant: TenantState, host: HostState): void {
    tenant.waiting -= 1;
    host.waiting -= 1;
    this.waitingCount -= 1;
  }

  private tenant(id: string): TenantState {
    let state = this.tenants.get(id);
    if (!state) {
      state = { lanes: new Map(), waiting: 0, running: 0, pace: new Pace(this.now()) };
      this.tenants.set(id, state);
    }
    return state;
  }

  private host(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { waiting: 0, inFlight: 0, pace: new Pace(this.now()) };
      this.hosts.set(host, state);
    }
    return state;
  }

  private forgetTenantIfIdle(id: string, state: TenantState): void {
    // Its pace is measured anew when it comes back.
    if (state.waiting === 0 && state.running === 0) this.tenants.delete(id);
  }

  private forgetHostIfIdle(host: string, state: HostState): void {
    // A failing host's smaller limit outlives this (see `failing`); its pace is measured anew.
    if (state.waiting === 0 && state.inFlight === 0) this.hosts.delete(host);
  }
}
