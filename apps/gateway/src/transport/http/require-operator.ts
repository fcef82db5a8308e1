import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { OPERATOR_CREDENTIAL_PREFIX, ServiceError } from '@payments/contracts';
import type { GatewayDatabase } from '../../db/schema';
import { bearerCredential } from './bearer';
import type { GatewayContext } from './context';
import { SessionEndedError } from '../../domain/people/errors';
import { systemClock, type Clock } from '../../domain/people/people';
import { callerOf, sessionCredential } from '../../domain/people/principal';
import { withAuditOrigin } from '../../domain/tenancy/admin-audit';

/**
 * Admin routes: an active operator credential (`Bearer opk_...`, audited with source admin_api), or
 * an operator's console session (`Session ses_...`, audited with source console and the user's
 * e-mail). A tenant's integration token or JWT is refused (401) before any lookup; so is a revoked or
 * unknown credential; a session that ended is 401 session_ended, a tenant user's session 403.
 */
export function requireOperator(db: Kysely<GatewayDatabase>, clock: Clock = systemClock) {
  return async (ctx: GatewayContext, next: Next) => {
    const authorization = ctx.get('authorization');
    if (
      sessionCredential(authorization) === undefined &&
      !bearerCredential(authorization)?.startsWith(OPERATOR_CREDENTIAL_PREFIX)
    )
      throw new ServiceError(
        'unauthorized',
        'send Authorization: Bearer <operator credential> (npm run admin -- operator create --name <name>) or Session <operator console session>; tenant tokens and JWTs are not taken here',
      );
    const caller = await callerOf({ db, clock }, authorization, {
      address: ctx.ip,
      requestId: ctx.state.requestId,
    }).catch((err: unknown) => {
      if (err instanceof SessionEndedError) throw new ServiceError('session_ended', err.message);
      throw err;
    });
    if (caller.principal.kind !== 'operator')
      throw new ServiceError('forbidden', 'this route is for operators: a tenant user’s session does not open it');
    const by = caller.principal.by;
    ctx.state.operator = by.operator;
    // Every action the route audits records where it came from (admin-audit).
    await withAuditOrigin(by, next);
  };
}
