import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { MicroBatcher } from '@payments/micro-batch';
import { admitRequests, type DoorAnswer } from './admit-requests';
import type { GatewayDatabase } from './schema';

/**
 * Idempotency records, scoped by tenant + key (Stripe's model). `begin` either claims the key for
 * this request or reports what the earlier request with that key left behind.
 */
export interface RequestIdentity {
  tenantId: string;
  key: string;
  method: string;
  path: string;
  fingerprint: string;
}

export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * The lock one attempt holds on its key: when it was locked, and the random token written with it.
 * Every lock of a key, first claim or takeover, is a compare-and-set to a later locked_at, so
 * locked_at alone tells the attempts apart; the token also fences an attempt against one that locked
 * at the same instant on another gateway's clock. A claim made without a token (null) is fenced on
 * locked_at only.
 */
export interface LockHold {
  lockedAt: Date;
  token: string | null;
}

export type BeginOutcome =
  | { kind: 'claimed'; hold: LockHold }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

/**
 * What `complete` or `release` came to: done, or nothing changed because the attempt no longer holds
 * the key (its lock timed out and a retry took it over; the retry's outcome is the one kept).
 */
export type HolderOutcome = 'done' | 'stale';

interface Completion {
  req: RequestIdentity;
  hold: LockHold;
  response: StoredResponse;
}

/**
 * Completions written together at most: one statement and one commit serve every request that finished
 * while the previous write ran.
 */
const COMPLETIONS_PER_WRITE = 500;

export class IdempotencyStore {
  private readonly completions: MicroBatcher<Completion, HolderOutcome>;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    readonly ttlHours: number,
    private readonly lockTimeoutMs: number,
  ) {
    this.completions = new MicroBatcher({
      maxItems: COMPLETIONS_PER_WRITE,
      maxRunning: 1,
      run: async (items) => {
        const stored = await this.completeMany(items);
        return items.map((_, i) => ({ ok: true, value: stored.has(i) ? 'done' : 'stale' }));
      },
    });
  }

  /** One request's claim, on its own (the gateway's admission claims keys with their requests' charges). */
  async begin(req: RequestIdentity): Promise<BeginOutcome> {
    const now = new Date();
    const lockToken = randomUUID();
    const [answer] = await admitRequests(
      this.db,
      [{ cost: 0, key: req, lockToken }],
      { perSecond: 0, burst: 0 },
      now,
      this.ttlHours,
    );
    return this.settle(req, answer, now, lockToken);
  }

  /**
   * What admit_requests found for a request's key: claimed; the same key on another request
   * (mismatch); a stored response (replay); or still locked, either running now or left by a gateway
   * that died mid-request, whose lock is taken over once older than the lock timeout. `lockToken` is
   * the token the claim wrote, when it wrote one.
   */
  async settle(req: RequestIdentity, answer: DoorAnswer, now: Date, lockToken?: string): Promise<BeginOutcome> {
    if (answer.claimed) return { kind: 'claimed', hold: { lockedAt: now, token: lockToken ?? null } };
    const record = answer.record;
    // Taken by a request that committed while this one was admitted: that one runs now.
    if (!record) return { kind: 'in_progress' };
    if (record.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
    if (record.statusCode !== null && record.responseBody !== null)
      return {
        kind: 'replay',
        response: { status: record.statusCode, body: record.responseBody, headers: record.responseHeaders ?? {} },
      };
    const staleBefore = new Date(now.getTime() - this.lockTimeoutMs);
    if (record.lockedAt && record.lockedAt < staleBefore) {
      // A new token: the attempt that held the lock may still be running, and must not complete or
      // release what this one now holds.
      const token = randomUUID();
      const takenOver = await this.db
        .updateTable('idempotency_keys')
        .set({ locked_at: now, lock_token: token })
        .where('tenant_id', '=', req.tenantId)
        .where('key', '=', req.key)
        .where('locked_at', '=', record.lockedAt)
        .returning('key')
        .executeTakeFirst();
      if (takenOver) return { kind: 'claimed', hold: { lockedAt: now, token } };
    }
    return { kind: 'in_progress' };
  }

  /**
   * Stores the response replayed for the key from now on, if `hold` still holds the key; 'stale'
   * when another attempt took it over (its response is the one kept). Writes of requests finishing
   * together share a commit.
   */
  complete(req: RequestIdentity, hold: LockHold, response: StoredResponse): Promise<HolderOutcome> {
    return this.completions.submit({ req, hold, response });
  }

  /**
   * Forgets a key whose request did not get a final answer (5xx), so a retry runs it again; 'stale'
   * (and nothing deleted) when another attempt holds the key by now.
   */
  async release(req: RequestIdentity, hold: LockHold): Promise<HolderOutcome> {
    const result = await this.db
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', req.tenantId)
      .where('key', '=', req.key)
      .where('status_code', 'is', null)
      .where('locked_at', '=', hold.lockedAt)
      .$if(hold.token !== null, (q) => q.where('lock_token', '=', hold.token))
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0 ? 'done' : 'stale';
  }

  /**
   * Deletes the keys past their expiry (IDEMPOTENCY_TTL_HOURS), oldest first, `batch` rows a statement,
   * until none is left or `maxBatches` ran (the next sweep goes on). The table cannot be partitioned
   * by time and dropped a day at a time: a key names no date, and each must stay unique for the ON
   * CONFLICT claims of admit_requests, which a partitioned table's unique index (holding the partition
   * key) cannot give. So its rows go by an indexed delete (expires_at), in batches small enough that no
   * statement runs long, holds many locks or leaves autovacuum a mountain at once; a key locked by a
   * takeover at that moment is skipped, and the recheck of expires_at spares one just renewed.
   */
  async deleteExpired(batch = 1_000, maxBatches = 100): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < maxBatches; i++) {
      const result = await sql`
        delete from idempotency_keys where (tenant_id, key) in (
            select tenant_id, key from idempotency_keys where expires_at < now()
            order by expires_at limit ${batch} for update skip locked)
          and expires_at < now()`.execute(this.db);
      const count = Number(result.numAffectedRows ?? 0);
      deleted += count;
      if (count < batch) break;
    }
    return deleted;
  }

  /**
   * Writes many completions in one statement, its own transaction: one round trip and one commit for
   * every request that finished while the previous write ran. Only the holders' rows change (an item
   * whose lock was taken over matches none); answers the positions of the items stored.
   */
  private async completeMany(items: readonly Completion[]): Promise<Set<number>> {
    const { rows } = await sql<{ i: string }>`
      update idempotency_keys as k set locked_at = null, lock_token = null, status_code = v.status,
        response_body = v.body, response_headers = v.headers::jsonb
      from unnest(${items.map((i) => i.req.tenantId)}::uuid[], ${items.map((i) => i.req.key)}::text[],
        ${items.map((i) => i.hold.lockedAt)}::timestamptz[], ${items.map((i) => i.hold.token)}::uuid[],
        ${items.map((i) => i.response.status)}::int[], ${items.map((i) => i.response.body)}::text[],
        ${items.map((i) => JSON.stringify(i.response.headers))}::text[])
        with ordinality as v(tenant_id, key, locked_at, token, status, body, headers, i)
      where k.tenant_id = v.tenant_id and k.key = v.key and k.locked_at = v.locked_at
        and (v.token is null or k.lock_token = v.token)
      returning v.i`.execute(this.db);
    return new Set(rows.map((r) => Number(r.i) - 1));
  }
}
