import { sql, type Kysely } from 'kysely';
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

export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly ttlHours: number,
    private readonly lockTimeoutMs: number,
  ) {}

  async begin(req: RequestIdentity): Promise<BeginOutcome> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.ttlHours * 3_600_000);
    // Insert the key, or take over a record that has expired; one statement, so two racing requests
    // cannot both claim it.
    const claimed = await this.db
      .insertInto('idempotency_keys')
      .values({
        tenant_id: req.tenantId,
        key: req.key,
        method: req.method,
        path: req.path,
        fingerprint: req.fingerprint,
        locked_at: now,
        status_code: null,
        response_body: null,
        response_headers: null,
        created_at: now,
        expires_at: expiresAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'key'])
          .doUpdateSet({
            method: req.method,
            path: req.path,
            fingerprint: req.fingerprint,
            locked_at: now,
            status_code: null,
            response_body: null,
            response_headers: null,
            created_at: now,
            expires_at: expiresAt,
          })
          .where('idempotency_keys.expires_at', '<', now),
      )
      .returning('key')
      .executeTakeFirst();
    if (claimed) return { kind: 'claimed' };

    const existing = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('tenant_id', '=', req.tenantId)
      .where('key', '=', req.key)
      .executeTakeFirst();
    if (!existing) return this.begin(req); // released between our two statements: try again
    if (existing.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
    if (existing.status_code !== null && existing.response_body !== null) {
      return {
        kind: 'replay',
        response: {
          status: existing.status_code,
          body: existing.response_body,
          headers: existing.response_headers ?? {},
        },
      };
    }
    // Still locked: either running now, or left by a gateway that died mid-request.
    const staleBefore = new Date(now.getTime() - this.lockTimeoutMs);
    if (existing.locked_at && existing.locked_at < staleBefore) {
      const takenOver = await this.db
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

  async complete(req: RequestIdentity, response: StoredResponse): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({
        locked_at: null,
        status_code: response.status,
        response_body: response.body,
        response_headers: JSON.stringify(response.headers),
      })
      .where('tenant_id', '=', req.tenantId)
      .where('key', '=', req.key)
      .execute();
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
}
