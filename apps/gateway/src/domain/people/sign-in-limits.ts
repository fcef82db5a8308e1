import type { Kysely } from 'kysely';
import {
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ADDRESS,
  SIGN_IN_LIMIT_WINDOW_MINUTES,
} from '@payments/contracts';
import type { GatewayDatabase } from '../../db/schema';
import { deleteFailures, insertFailures, nthNewestFailure } from '../../db/people/sign-in-failures';
import { SignInLimitedError } from './errors';

/**
 * The console's sign-in limits: failures per account (the e-mail, or the hash of a development
 * credential) and per client address, in a sliding window kept in Postgres so every gateway instance
 * counts the same. The console passes the end user's address, so its users are not one address.
 */
const WINDOW_MS = SIGN_IN_LIMIT_WINDOW_MINUTES * 60_000;

export interface SignInKeys {
  /** `email:<lower-case e-mail>`, `token:<sha-256>` or `credential:<sha-256>`. */
  account: string;
  /** `address:<client address>`. */
  address: string;
}

/** Throws SignInLimitedError (with the seconds until a try is counted again) when either key is over its limit. */
export async function checkSignInLimits(db: Kysely<GatewayDatabase>, keys: SignInKeys, now: Date): Promise<void> {
  const since = new Date(now.getTime() - WINDOW_MS);
  const limits = [
    { key: keys.account, limit: SIGN_IN_FAILURES_PER_ACCOUNT, what: 'for this account' },
    { key: keys.address, limit: SIGN_IN_FAILURES_PER_ADDRESS, what: 'from this address' },
  ];
  for (const { key, limit, what } of limits) {
    const oldestCounted = await nthNewestFailure(db, key, since, limit);
    if (oldestCounted) {
      const waitMs = oldestCounted.getTime() + WINDOW_MS - now.getTime();
      throw new SignInLimitedError(Math.max(1, Math.ceil(waitMs / 1000)), what);
    }
  }
}

export async function recordSignInFailure(db: Kysely<GatewayDatabase>, keys: SignInKeys, now: Date): Promise<void> {
  await insertFailures(db, [keys.account, keys.address], now, new Date(now.getTime() - WINDOW_MS));
}

/** A good sign-in forgets the account's failures (not the address's: others may share it). */
export async function clearAccountFailures(db: Kysely<GatewayDatabase>, keys: SignInKeys): Promise<void> {
  await deleteFailures(db, keys.account);
}
