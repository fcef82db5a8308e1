import { sql, type Kysely } from 'kysely';
import type { CallbacksDatabase, EventRow, EventStatus } from '../db/schema';
import { targetHostOf, type ClaimedEvent, type EventView, type NewCallbackEvent } from './callback-event';
import type { ClaimRoom } from './held-events';
import { storableExcerpt, type AttemptOutcome } from './http-delivery';

/**
 * Postgres is the delivery queue (table `events`, apart from the log `event_log` since migration
 * 0009: a delivered event leaves the queue): events wait as `pending` rows with a due time (`next_attempt_at`).
 * A worker claims due rows with FOR UPDATE SKIP LOCKED, so instances never claim the same row, and
 * moves their due time to the end of a lease (`locked_until`, the same instant): a claimed row is not
 * due, so the due index holds only waiting work and a claim reads no more rows than it takes, however
 * long the backlog. A worker that dies leaves rows that come due again when the lease ends. Each
 * attempt is written together with the event's next state in one transaction.
 */
export class EventStore {
  constructor(private readonly db: Kysely<CallbacksDatabase>) {}

  /**
   * Records new events; an event id seen before is ignored (so a republished event is delivered once).
   * Events named in `claim` are stored already claimed by the caller, which delivers them at once:
   * the first attempt needs no trip through the queue, for `leaseMs` at most and, when `workerId` is
   * given, while that worker's lease lives (see WorkerRegistry). Returns the claimed events inserted.
   */
  async ingest(
    events: NewCallbackEvent[],
    claim: ReadonlySet<string>,
    leaseMs: number,
    workerId: string | null = null,
  ): Promise<ClaimedEvent[]> {
    if (events.length === 0) return [];
    const lease = leaseEnd(leaseMs);
    // unnest: one statement text and eight parameters whatever the batch size (a VALUES list would
    // take ten parameters per row, and be built and parsed anew for every batch).
    const { rows: inserted } = await sql<EventRow>`
      insert into events (event_id, tenant_id, event_type, url, target_host, body, status, next_attempt_at, locked_until, lease_token, worker_id, trace_context, receivable_id)
      select e.event_id, e.tenant_id, e.event_type, e.url, e.target_host, e.body, 'pending',
        case when e.claimed then ${lease} else now() end, case when e.claimed then ${lease} end,
        case when e.claimed then gen_random_uuid() end, case when e.claimed then ${workerId}::uuid end, e.trace_context, e.receivable_id
      from unnest(${events.map((e) => e.eventId)}::text[], ${events.map((e) => e.tenantId)}::uuid[], ${events.map((e) => e.eventType)}::text[],
        ${events.map((e) => e.url)}::text[], ${events.map((e) => targetHostOf(e.url))}::text[], ${events.map((e) => e.body)}::text[],
        ${events.map((e) => claim.has(e.eventId))}::bool[], ${events.map((e) => (e.traceContext ? JSON.stringify(e.traceContext) : null))}::json[],
        ${events.map((e) => e.receivableId ?? null)}::uuid[])
        as e(event_id, tenant_id, event_type, url, target_host, body, claimed, trace_context, receivable_id)
      on conflict (event_id) do nothing
      returning event_id, tenant_id, url, target_host, body, failures_in_run, locked_until, lease_token, trace_context`.execute(
      this.db,
    );
    return inserted.filter((r) => r.locked_until !== null).map(toClaimed);
  }

  /**
   * Claims up to `limit` due events, oldest first, and never more for a host or a tenant than its
   * room: hosts and tenants without room are skipped (a slow receiver, or one tenant's backlog, cannot
   * hold up the others), the rest take what is left. Without tenant room, tenants are not limited.
   * Claimed for `leaseMs` at most and, when `workerId` is given, while that worker's lease lives.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    room: Pick<ClaimRoom, 'left' | 'perHost'> & Partial<Pick<ClaimRoom, 'tenantLeft' | 'perTenant'>>,
    workerId: string | null = null,
  ): Promise<ClaimedEvent[]> {
    if (limit <= 0) return [];
    const busy = [...room.left];
    const busyTenants = [...(room.tenantLeft ?? [])];
    // claim_due_events (migrations 0003 to 0008): a function, so that it can keep its plan under a burst.
    const rows = await sql<EventRow>`
      select * from claim_due_events(${limit}, ${leaseInterval(leaseMs)}, ${busy.map(([host]) => host)}::text[], ${busy.map(([, n]) => n)}::int[], ${room.perHost}, ${workerId}::uuid,
        ${busyTenants.map(([tenant]) => tenant)}::uuid[], ${busyTenants.map(([, n]) => n)}::int[], ${room.perTenant ?? limit})`.execute(
      this.db,
    );
    return rows.rows.map(toClaimed);
  }

  /**
   * Logs attempts and moves each event on (delivered, retry at `retryAt`, or dead when retryAt is
   * null), many at once: one transaction of two statements, whatever the batch size. Fenced: an
   * outcome is written only while its event is pending and still carries the lease token of the claim
   * that made the attempt; the others (a later claim took the event, or it is already settled) are
   * left out and returned, so a late attempt never overwrites a later outcome nor turns a delivery back.
   */
  async recordAttempts(results: AttemptResult[]): Promise<{ stale: AttemptResult[] }> {
    if (results.length === 0) return { stale: [] };
    const events = results.map((r) => r.event);
    const statuses = results.map(statusAfter);
    // unnest: the same two statement texts whatever the batch size (no per-row SQL to build and parse).
    return this.db.transaction().execute(async (trx) => {
      const { rows: moved } = await sql<{ event_id: string; lease_token: string }>`
        update events set status = v.status, attempt_count = events.attempt_count + 1, failures_in_run = v.failures,
          next_attempt_at = v.next_at, locked_until = null, lease_token = null, worker_id = null, delivered_at = v.delivered_at, dead_at = v.dead_at
        from unnest(${events.map((e) => e.eventId)}::text[], ${events.map((e) => e.leaseToken)}::uuid[], ${statuses}::text[],
          ${results.map((r) => (r.outcome.ok ? r.event.failuresInRun : r.event.failuresInRun + 1))}::int[],
          ${results.map((r, i) => (statuses[i] === 'pending' ? r.retryAt : null))}::timestamptz[], ${results.map((r) => (r.outcome.ok ? r.attemptedAt : null))}::timestamptz[],
          ${results.map((r, i) => (statuses[i] === 'dead' ? r.attemptedAt : null))}::timestamptz[])
          as v(event_id, lease_token, status, failures, next_at, delivered_at, dead_at)
        where events.event_id = v.event_id and events.lease_token = v.lease_token and events.status = 'pending'
        returning events.event_id, v.lease_token`.execute(trx);
      // By event and token: one batch may hold a stale and a current attempt of the same event.
      const written = new Set(moved.map((r) => `${r.event_id} ${r.lease_token}`));
      const isWritten = (r: AttemptResult) => written.has(`${r.event.eventId} ${r.event.leaseToken}`);
      const current = results.filter(isWritten);
      if (current.length > 0)
        await sql`
          insert into attempts (event_id, tenant_id, attempted_at, status_code, error, duration_ms, response_excerpt, target_host)
          select * from unnest(${current.map((r) => r.event.eventId)}::text[], ${current.map((r) => r.event.tenantId)}::uuid[], ${current.map((r) => r.attemptedAt)}::timestamptz[],
            ${current.map((r) => r.outcome.statusCode)}::int[], ${current.map((r) => r.outcome.error)}::text[], ${current.map((r) => r.outcome.durationMs)}::int[],
            ${current.map((r) => storableExcerpt(r.outcome.responseExcerpt))}::text[], ${current.map((r) => r.event.targetHost)}::text[])`.execute(
          trx,
        );
      return { stale: results.filter((r) => !isWritten(r)) };
    });
  }

  /**
   * Gives claims back unused (a worker stopping with events it had not started): due again at once.
   * Fenced like an outcome: a claim that has passed to another worker is not touched.
   */
  async release(events: Array<Pick<ClaimedEvent, 'eventId' | 'leaseToken'>>): Promise<void> {
    if (events.length === 0) return;
    await sql`
      update events set next_attempt_at = now(), locked_until = null, lease_token = null, worker_id = null
      from unnest(${events.map((e) => e.eventId)}::text[], ${events.map((e) => e.leaseToken)}::uuid[]) as v(event_id, lease_token)
      where events.event_id = v.event_id and events.lease_token = v.lease_token and events.status = 'pending'`.execute(
      this.db,
    );
  }

  /** Gives a claimed event back without an attempt (e.g. its signing secret could not be read); fenced. */
  async postpone(event: ClaimedEvent, until: Date): Promise<void> {
    await this.db
      .updateTable('events')
      .set({ next_attempt_at: until, locked_until: null, lease_token: null, worker_id: null })
      .where('event_id', '=', event.eventId)
      .where('lease_token', '=', event.leaseToken)
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * Events waiting for delivery (due now or scheduled for a retry): the queue depth. Read from the
   * queue's pending index, so it costs the backlog, never the history (migration 0009).
   */
  async countWaiting(): Promise<number> {
    const row = await this.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('waiting'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.waiting);
  }

  /** Puts a dead event back in the queue for a new run of the schedule. False when it is not dead. */
  async retryDead(tenantId: string, eventId: string): Promise<boolean> {
    const row = await this.db
      .updateTable('events')
      .set({
        status: 'pending',
        failures_in_run: 0,
        next_attempt_at: sql<Date>`now()`,
        locked_until: null,
        lease_token: null,
        worker_id: null,
        dead_at: null,
      })
      .where('tenant_id', '=', tenantId)
      .where('event_id', '=', eventId)
      .where('status', '=', 'dead')
      .returning('event_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Puts the tenant's dead events whose dead_at is in [since, until) back in the queue, as retryDead
   * does for one: pending, due now, a new run of the schedule. At most `max`, those dead longest
   * first; answers how many. A row being retried by another call at the same time is skipped.
   */
  async replayDead(tenantId: string, since: Date, until: Date | null, max: number): Promise<number> {
    // Chosen once (materialized): as an IN subquery the plan may scan it again per row updated, and
    // each scan, seeing the rows already moved, takes the next ones past the limit.
    const { rows } = await sql<{ event_id: string }>`
      with chosen as materialized (
        select event_id from events
        where tenant_id = ${tenantId} and status = 'dead' and dead_at >= ${since}
          and (${until}::timestamptz is null or dead_at < ${until}::timestamptz)
        order by dead_at
        limit ${max}
        for update skip locked)
      update events set status = 'pending', failures_in_run = 0, next_attempt_at = now(), locked_until = null,
        lease_token = null, worker_id = null, dead_at = null
      from chosen
      where events.event_id = chosen.event_id and events.status = 'dead'
      returning events.event_id`.execute(this.db);
    return rows.length;
  }

  /**
   * One event with its attempts. What is owed is read from the queue; anything else from the log's
   * day the event's key names (or, for an event from before the log was split, the old rows'
   * partition): one partition either way. Its attempts are no older than the event.
   */
  async find(tenantId: string, eventId: string): Promise<EventView | undefined> {
    const row = (await this.findQueued(tenantId, eventId)) ?? (await this.findLogged(tenantId, eventId));
    if (!row) return undefined;
    const attempts = await this.db
      .selectFrom('attempts')
      .select(['attempted_at', 'status_code', 'error', 'duration_ms', 'response_excerpt'])
      .where('event_id', '=', eventId)
      .where('attempted_at', '>=', sql<Date>`${row.created_at}::timestamptz - ${ATTEMPT_CLOCK_SKEW}::interval`)
      .orderBy('attempted_at')
      .orderBy('id')
      .execute();
    return {
      ...toView(row),
      body: row.body,
      attempts: attempts.map((a) => ({
        attemptedAt: a.attempted_at,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
        responseExcerpt: a.response_excerpt,
      })),
    };
  }

  private findQueued(tenantId: string, eventId: string): Promise<EventRow | undefined> {
    return this.db
      .selectFrom('events')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
  }

  private async findLogged(tenantId: string, eventId: string): Promise<EventRow | undefined> {
    const key = await this.db
      .selectFrom('event_keys')
      .select('created_at')
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    const log = this.db
      .selectFrom('event_log')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('event_id', '=', eventId);
    if (key) return log.where('created_at', '=', key.created_at).executeTakeFirst();
    return log.where('created_at', '<', sql<Date>`log_converted_at()`).executeTakeFirst();
  }

  /**
   * Newest first; the cursor is the (created_at, event_id) of the last row of the previous page.
   * `receivableId`: only the events of that charge (migration 0007). Pending and dead events are
   * listed from the queue, which holds them all; the rest from the log, where an event still queued
   * shows its queue row (its schedule and attempts so far).
   */
  async list(
    tenantId: string,
    status: EventStatus | undefined,
    limit: number,
    after?: { createdAt: Date; eventId: string },
    receivableId?: string,
  ): Promise<EventView[]> {
    const owed = status === 'pending' || status === 'dead';
    let query = this.db
      .selectFrom(owed ? 'events' : 'event_log')
      .selectAll()
      .where('tenant_id', '=', tenantId);
    if (status) query = query.where('status', '=', status);
    if (receivableId !== undefined) query = query.where('receivable_id', '=', receivableId);
    if (after)
      query = query.where((eb) =>
        eb(eb.refTuple('created_at', 'event_id'), '<', eb.tuple(after.createdAt, after.eventId)),
      );
    const rows = await query.orderBy('created_at', 'desc').orderBy('event_id', 'desc').limit(limit).execute();
    const stillQueued = owed ? [] : rows.filter((r) => r.status !== 'delivered').map((r) => r.event_id);
    const queued =
      stillQueued.length === 0
        ? new Map<string, EventRow>()
        : new Map(
            (
              await this.db
                .selectFrom('events')
                .selectAll()
                .where('tenant_id', '=', tenantId)
                .where('event_id', 'in', stillQueued)
                .execute()
            ).map((r) => [r.event_id, r]),
          );
    return rows.map((r) => toView(queued.get(r.event_id) ?? r));
  }
}

/** How far a worker's clock (attempted_at) may be behind Postgres's (created_at). */
const ATTEMPT_CLOCK_SKEW = '5 minutes';

/** One finished attempt, waiting to be written. */
export interface AttemptResult {
  event: ClaimedEvent;
  attemptedAt: Date;
  outcome: AttemptOutcome;
  /** When to try again; null when no attempt is left (or the URL is refused). */
  retryAt: Date | null;
}

export function statusAfter(r: AttemptResult): EventStatus {
  return r.outcome.ok ? 'delivered' : r.retryAt ? 'pending' : 'dead';
}

function leaseInterval(leaseMs: number) {
  return sql`make_interval(secs => ${leaseMs / 1000})`;
}

/** `now()` plus a lease, in Postgres (a claim's end; a worker's alive_until). */
export function leaseEnd(leaseMs: number) {
  return sql<Date>`now() + ${leaseInterval(leaseMs)}`;
}

function toClaimed(
  r: Pick<
    EventRow,
    'event_id' | 'tenant_id' | 'url' | 'target_host' | 'body' | 'failures_in_run' | 'lease_token' | 'trace_context'
  >,
): ClaimedEvent {
  return {
    eventId: r.event_id,
    tenantId: r.tenant_id,
    url: r.url,
    targetHost: r.target_host,
    body: r.body,
    failuresInRun: r.failures_in_run,
    // Claimed rows always carry one (the claim wrote it).
    leaseToken: r.lease_token ?? '',
    traceContext: r.trace_context,
  };
}

function toView(row: EventRow): EventView {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    url: row.url,
    status: row.status,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    attemptCount: row.attempt_count,
    // A claimed event's next_attempt_at is its lease end, not a schedule: its attempt is under way.
    nextAttemptAt: isClaimed(row) ? null : row.next_attempt_at,
  };
}

function isClaimed(row: EventRow): boolean {
  return row.status === 'pending' && row.locked_until !== null && row.locked_until.getTime() > Date.now();
}
