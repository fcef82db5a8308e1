import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../schema';

/** Failed sign-ins per key (`email:...`, `address:...`), counted over a sliding window. */

/** The time of the `nth` newest failure of `key` after `since`, if there are that many. */
export async function nthNewestFailure(
  db: Kysely<GatewayDatabase>,
  key: string,
  since: Date,
  nth: number,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('console_sign_in_failures')
    .select('at')
    .where('key', '=', key)
    .where('at', '>', since)
    .orderBy('at', 'desc')
    .offset(nth - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.at;
}

/** Records one failure under each key, and drops that key's failures older than the window. */
export async function insertFailures(
  db: Kysely<GatewayDatabase>,
  keys: readonly string[],
  at: Date,
  windowStart: Date,
): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('console_sign_in_failures').where('key', 'in', keys).where('at', '<=', windowStart).execute();
  await db
    .insertInto('console_sign_in_failures')
    .values(keys.map((key) => ({ key, at })))
    .execute();
}

export async function deleteFailures(db: Kysely<GatewayDatabase>, key: string): Promise<void> {
  await db.deleteFrom('console_sign_in_failures').where('key', '=', key).execute();
}
