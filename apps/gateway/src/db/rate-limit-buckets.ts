import type { Kysely } from 'kysely';
import { admitRequests, type BucketShape } from './admit-requests';
import type { GatewayDatabase } from './schema';

export type { BucketShape } from './admit-requests';

export type Taken = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Takes `cost` tokens from the bucket `key`, or none when it holds fewer (admit_requests with no key to
 * claim). The bucket is locked while it is taken, so every gateway instance shares it and two of them
 * never spend the same tokens; it is refilled on read from the time since its last take.
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
  const [answer] = await admitRequests(db, [{ bucket: key, cost }], shape, new Date(), 0);
  return answer.taken ? { ok: true } : { ok: false, retryAfterMs: answer.retryAfterMs };
}
