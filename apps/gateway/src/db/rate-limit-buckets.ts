import { sql, type Kysely, type Transaction } from 'kysely';
import type { GatewayDatabase } from './schema';

/** A token bucket: holds up to `burst` tokens, refilled at `perSecond`. */
export interface BucketShape {
  perSecond: number;
  burst: number;
}

export type Taken = { ok: true } | { ok: false; retryAfterMs: number };

/** One request's take: `cost` tokens from the bucket `key`. */
export interface TokenTake {
  key: string;
  cost: number;
}

/**
 * Takes each request's tokens from its bucket, in the order given, inside the caller's transaction:
 * a take that finds too few tokens takes none and says when enough will be there. Two statements
 * whatever the number of takes: the first creates missing buckets and locks them all (so every gateway
 * instance shares each bucket, and two of them never spend the same tokens), returning what each holds
 * refilled from the time since its last take; the second writes what is left. Buckets are locked in key
 * order, so two batches naming the same tenants cannot deadlock.
 *
 * In SQL rather than rate-limiter-flexible's Postgres store: that store counts fixed windows (a
 * tenant could send twice the burst across a window's edge) and creates its table at run time,
 * outside the migrations.
 */
export async function takeTokensInBatch(
  trx: Transaction<GatewayDatabase>,
  takes: readonly TokenTake[],
  shape: BucketShape,
): Promise<Taken[]> {
  const keys = [...new Set(takes.map((t) => t.key))].sort();
  if (keys.length === 0) return [];
  const { rows } = await sql<{ key: string; tokens: number }>`
    insert into rate_limit_buckets as b (key, tokens, updated_at)
      select key, ${shape.burst}::float8, now() from unnest(${keys}::text[]) as key
    on conflict (key) do update set tokens = b.tokens
    returning b.key, least(${shape.burst}::float8,
      b.tokens + extract(epoch from (now() - b.updated_at)) * ${shape.perSecond}::float8) as tokens`.execute(trx);
  const held = new Map(rows.map((r) => [r.key, Number(r.tokens)]));
  const taken = takes.map((take) => spend(held, take, shape));
  await sql`
    update rate_limit_buckets as b set tokens = v.tokens, updated_at = now()
    from unnest(${[...held.keys()]}::text[], ${[...held.values()]}::float8[]) as v(key, tokens)
    where b.key = v.key`.execute(trx);
  return taken;
}

/** Takes one request's cost from what its bucket holds now, or tells how long until it could. */
function spend(held: Map<string, number>, { key, cost }: TokenTake, shape: BucketShape): Taken {
  if (cost > shape.burst) return { ok: false, retryAfterMs: Number.POSITIVE_INFINITY };
  const tokens = held.get(key) ?? shape.burst;
  if (tokens >= cost) {
    held.set(key, tokens - cost);
    return { ok: true };
  }
  return { ok: false, retryAfterMs: Math.max(1, Math.ceil(((cost - tokens) / shape.perSecond) * 1000)) };
}

/** One take in a transaction of its own (tests, and callers that batch nothing). */
export async function takeTokens(
  db: Kysely<GatewayDatabase>,
  key: string,
  cost: number,
  shape: BucketShape,
): Promise<Taken> {
  const [taken] = await db.transaction().execute((trx) => takeTokensInBatch(trx, [{ key, cost }], shape));
  return taken;
}
