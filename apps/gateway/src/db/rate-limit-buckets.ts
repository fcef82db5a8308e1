import { sql, type Kysely } from 'kysely';
import type { GatewayDatabase } from './schema';

/** A token bucket: holds up to `burst` tokens, refilled at `perSecond`. */
export interface BucketShape {
  perSecond: number;
  burst: number;
}

export type Taken = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Takes `cost` tokens from the bucket `key`, or none when it holds fewer: one statement, so every
 * gateway instance shares the bucket and two of them never spend the same tokens (the row lock
 * orders them). The bucket is refilled on read from the time since its last take.
 *
 * In SQL rather than rate-limiter-flexible's Postgres store: that store counts fixed windows (a
 * tenant could send twice the burst across a window's edge) and creates its table at run time,
 * outside the migrations.
 */
export async function takeTokens(
  db: Kysely<GatewayDatabase>,
  key: string,
  cost: number,
  shape: BucketShape,
): Promise<Taken> {
  if (cost > shape.burst) return { ok: false, retryAfterMs: Number.POSITIVE_INFINITY };
  const refilled = sql<number>`least(${shape.burst}::float8, rate_limit_buckets.tokens
    + extract(epoch from (now() - rate_limit_buckets.updated_at)) * ${shape.perSecond}::float8)`;
  const { rows } = await sql<{ tokens: number }>`
    insert into rate_limit_buckets (key, tokens, updated_at) values (${key}, ${shape.burst - cost}::float8, now())
    on conflict (key) do update set tokens = ${refilled} - ${cost}::float8, updated_at = now()
      where ${refilled} >= ${cost}::float8
    returning tokens`.execute(db);
  if (rows.length > 0) return { ok: true };
  const left = await sql<{
    tokens: number;
  }>`select ${refilled} as tokens from rate_limit_buckets where key = ${key}`.execute(db);
  const missing = cost - Number(left.rows[0]?.tokens ?? 0);
  return { ok: false, retryAfterMs: Math.max(1, Math.ceil((missing / shape.perSecond) * 1000)) };
}
