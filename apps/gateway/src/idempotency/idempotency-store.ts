import { sql, type Kysely } from 'kysely';
import { MicroBatcher } from '@payments/micro-batch';
import { admitRequests, type DoorAnswer } from '../db/admit-requests';
import type { GatewayDatabase } from '../db/schema';

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

export type BeginOutcome =
  { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse } | { kind: 'mismatch' } | { kind: 'in_progress' };

/**
 * Completions written together at most: one statement and one commit serve every request that finished
 * while the previous write ran.
 */
const COMPLETIONS_PER_WRITE = 500;

export class IdempotencyStore {
  private readonly completions: MicroBatcher<{ req: RequestIdentity; response: StoredResponse }, void>;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    readonly ttlHours: number,
    private readonly lockTimeoutMs: number,
  ) {
    this.completions = new MicroBatcher({
      maxItems: COMPLETIONS_PER_WRITE,
      maxRunning: 1,
      run: async (items) => {
        await this.completeMany(items);
        return items.map(() => ({ ok: true, value: undefined }));
      },
    });
  }

  /** One request's claim, on its own (the gateway's admission claims keys with their requests' charges). */
  async begin(req: RequestIdentity): Promise<BeginOutcome> {
    const now = new Date();
    const [answer] = await admitRequests(
      this.db,
      [{ cost: 0, key: req }],
      { perSecond: 0, burst: 0 },
      now,
      this.ttlHours,
    );
    return this.settle(req, answer, now);
  }

  /**
   * What admit_requests found for a request's key: claimed; the same key on another request
   * (mismatch); a stored response (replay); or still locked, either running now or left by a gateway
   * that died mid-request, whose lock is taken over once older than the lock timeout.
   */
  async settle(req: RequestIdentity, answer: DoorAnswer, now: Date): Promise<BeginOutcome> {
    if (answer.claimed) return { kind: 'claimed' };
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
      const takenOver = await this.db
        .updateTable('idempotency_keys')
        .set({ locked_at: now })
        .where('tenant_id', '=', req.tenantId)
        .where('key', '=', req.key)
        .where('locked_at', '=', record.lockedAt)
        .returning('key')
        .executeTakeFirst();
      if (takenOver) return { kind: 'claimed' };
    }
    return { kind: 'in_progress' };
  }

  /** Stores the response replayed for the key from now on. Writes of requests finishing together share a commit. */
  complete(req: RequestIdentity, response: StoredResponse): Promise<void> {
    return this.completions.submit({ req, response });
  }

  /** Forgets a key whose request did not get a final answer (5xx), so a retry runs it again. */
  async release(req: RequestIdentity): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', req.tenantId)
      .where('key', '=', req.key)
      .where('status_code', 'is', null)
      .execute();
  }

  async deleteExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<', sql<Date>`now()`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Writes many completions in one statement, its own transaction: one round trip and one commit for
   * every request that finished while the previous write ran.
   */
  private async completeMany(items: ReadonlyArray<{ req: RequestIdentity; response: StoredResponse }>): Promise<void> {
    await sql`
      update idempotency_keys as k set locked_at = null, status_code = v.status, response_body = v.body,
        response_headers = v.headers::jsonb
      from unnest(${items.map((i) => i.req.tenantId)}::uuid[], ${items.map((i) => i.req.key)}::text[],
        ${items.map((i) => i.response.status)}::int[], ${items.map((i) => i.response.body)}::text[],
        ${items.map((i) => JSON.stringify(i.response.headers))}::text[]) as v(tenant_id, key, status, body, headers)
      where k.tenant_id = v.tenant_id and k.key = v.key`.execute(this.db);
  }
}
