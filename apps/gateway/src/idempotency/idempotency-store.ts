import { sql, type Kysely, type Transaction } from 'kysely';
import { MicroBatcher } from '@payments/micro-batch';
import type { GatewayDatabase, IdempotencyKeysTable } from '../db/schema';

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

type KeyRow = Pick<IdempotencyKeysTable, 'fingerprint' | 'locked_at' | 'status_code' | 'response_body'> & {
  tenant_id: string;
  key: string;
  response_headers: Record<string, string> | null;
};

const idOf = (r: { tenantId: string; key: string }) => `${r.tenantId} ${r.key}`;

export class IdempotencyStore {
  private readonly completions: MicroBatcher<{ req: RequestIdentity; response: StoredResponse }, void>;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly ttlHours: number,
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

  /** One request's claim, in a transaction of its own. */
  async begin(req: RequestIdentity): Promise<BeginOutcome> {
    const [outcome] = await this.db.transaction().execute((trx) => this.beginMany(trx, [req]));
    return outcome;
  }

  /**
   * Claims each request's key, or reports what the earlier request with that key left behind, inside
   * the caller's transaction (the gateway's admission: the rate-limit charge commits with it). One
   * statement claims every new or expired key at once, so two racing requests cannot both claim one;
   * the second of two requests with the same key in one batch finds the first's claim (in progress).
   */
  async beginMany(trx: Transaction<GatewayDatabase>, requests: readonly RequestIdentity[]): Promise<BeginOutcome[]> {
    if (requests.length === 0) return [];
    const now = new Date();
    const claimed = await this.claim(trx, requests, now);
    const firstClaims = new Set<number>();
    const seen = new Set<string>();
    requests.forEach((r, i) => {
      if (claimed.has(idOf(r)) && !seen.has(idOf(r))) firstClaims.add(i);
      seen.add(idOf(r));
    });
    const others = requests.filter((_, i) => !firstClaims.has(i));
    const existing = await this.existingRows(trx, others);
    const outcomes: BeginOutcome[] = [];
    for (const [i, req] of requests.entries())
      outcomes.push(
        firstClaims.has(i) ? { kind: 'claimed' } : await this.outcomeOf(trx, req, existing.get(idOf(req)), now),
      );
    return outcomes;
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
   * Inserts every new key, or takes over one that has expired, in key order (two batches naming the
   * same keys cannot deadlock); returns the keys claimed. A key named twice is inserted once.
   */
  private async claim(trx: Transaction<GatewayDatabase>, requests: readonly RequestIdentity[], now: Date) {
    const distinct = [...new Map(requests.map((r) => [idOf(r), r])).values()].sort((a, b) =>
      idOf(a) < idOf(b) ? -1 : 1,
    );
    const expiresAt = new Date(now.getTime() + this.ttlHours * 3_600_000);
    const column = <T>(pick: (r: RequestIdentity) => T) => distinct.map(pick);
    const { rows } = await sql<{ tenant_id: string; key: string }>`
      insert into idempotency_keys as k (tenant_id, key, method, path, fingerprint, locked_at, created_at, expires_at)
        select v.tenant_id, v.key, v.method, v.path, v.fingerprint, ${now}::timestamptz, ${now}::timestamptz, ${expiresAt}::timestamptz
        from unnest(${column((r) => r.tenantId)}::uuid[], ${column((r) => r.key)}::text[], ${column((r) => r.method)}::text[],
          ${column((r) => r.path)}::text[], ${column((r) => r.fingerprint)}::text[]) as v(tenant_id, key, method, path, fingerprint)
      on conflict (tenant_id, key) do update set method = excluded.method, path = excluded.path,
        fingerprint = excluded.fingerprint, locked_at = excluded.locked_at, status_code = null, response_body = null,
        response_headers = null, created_at = excluded.created_at, expires_at = excluded.expires_at
        where k.expires_at < ${now}::timestamptz
      returning k.tenant_id, k.key`.execute(trx);
    return new Set(rows.map((r) => idOf({ tenantId: r.tenant_id, key: r.key })));
  }

  private async existingRows(trx: Transaction<GatewayDatabase>, requests: readonly RequestIdentity[]) {
    if (requests.length === 0) return new Map<string, KeyRow>();
    const { rows } = await sql<KeyRow>`
      select k.tenant_id, k.key, k.fingerprint, k.locked_at, k.status_code, k.response_body, k.response_headers
      from idempotency_keys k
      join unnest(${requests.map((r) => r.tenantId)}::uuid[], ${requests.map((r) => r.key)}::text[]) as v(tenant_id, key)
        on k.tenant_id = v.tenant_id and k.key = v.key`.execute(trx);
    return new Map(rows.map((r) => [idOf({ tenantId: r.tenant_id, key: r.key }), r]));
  }

  /** What a key already taken means for this request: replay, mismatch, still running, or a stale lock taken over. */
  private async outcomeOf(
    trx: Transaction<GatewayDatabase>,
    req: RequestIdentity,
    existing: KeyRow | undefined,
    now: Date,
  ): Promise<BeginOutcome> {
    // Released by its own request between the claim and this read: the client's retry claims it.
    if (!existing) return { kind: 'in_progress' };
    if (existing.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
    if (existing.status_code !== null && existing.response_body !== null)
      return {
        kind: 'replay',
        response: {
          status: existing.status_code,
          body: existing.response_body,
          headers: existing.response_headers ?? {},
        },
      };
    // Still locked: either running now, or left by a gateway that died mid-request.
    const staleBefore = new Date(now.getTime() - this.lockTimeoutMs);
    if (existing.locked_at && existing.locked_at < staleBefore) {
      const takenOver = await trx
        .updateTable('idempotency_keys')
        .set({ locked_at: now })
        .where('tenant_id', '=', req.tenantId)
        .where('key', '=', req.key)
        .where('locked_at', '=', existing.locked_at)
        .returning('key')
        .executeTakeFirst();
      if (takenOver) return { kind: 'claimed' };
    }
    return { kind: 'in_progress' };
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
