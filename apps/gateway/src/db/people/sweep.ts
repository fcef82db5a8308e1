import type { Kysely } from 'kysely';
import { SIGN_IN_LIMIT_WINDOW_MINUTES } from '@payments/contracts';
import type { GatewayDatabase } from '../schema';

/** How long an ended or expired session's row stays (for support's questions), and an expired invitation's. */
const KEEP_ENDED_MS = 7 * 24 * 3_600_000;

/**
 * Removes what no rule reads any more: failed sign-ins outside the limits' window (each unknown
 * e-mail tried leaves a key no later sign-in clears), sessions ended or past their absolute limit a
 * week ago, and invitations expired unused a week ago. The audit keeps the history.
 */
export async function sweepConsolePeople(db: Kysely<GatewayDatabase>, now: Date): Promise<void> {
  const windowStart = new Date(now.getTime() - SIGN_IN_LIMIT_WINDOW_MINUTES * 60_000);
  const keptSince = new Date(now.getTime() - KEEP_ENDED_MS);
  await db.deleteFrom('console_sign_in_failures').where('at', '<=', windowStart).execute();
  await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('ended_at', '<', keptSince), eb('expires_at', '<', keptSince)]))
    .execute();
  await db
    .deleteFrom('console_invitations')
    .where('accepted_at', 'is', null)
    .where('expires_at', '<', keptSince)
    .execute();
}
