import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { OPERATOR_CREDENTIAL_PREFIX, ServiceError } from '@payments/contracts';
import { findActiveOperator } from '../admin/operators';
import type { GatewayDatabase } from '../db/schema';
import { bearerCredential } from '../http/bearer';
import type { GatewayContext } from '../http/context';

/**
 * Admin routes: an active operator credential (`opk_...`), and nothing else. A tenant's integration
 * token or JWT is refused (401) before any lookup; so is a revoked or unknown credential.
 */
export function requireOperator(db: Kysely<GatewayDatabase>) {
  return async (ctx: GatewayContext, next: Next) => {
    const credential = bearerCredential(ctx.get('authorization'));
    if (!credential?.startsWith(OPERATOR_CREDENTIAL_PREFIX))
      throw new ServiceError(
        'unauthorized',
        'send Authorization: Bearer <operator credential> (npm run admin -- operator create --name <name>); tenant tokens and JWTs are not taken here',
      );
    const operator = await findActiveOperator(db, credential);
    if (!operator) throw new ServiceError('unauthorized', 'this operator credential is unknown or was revoked');
    ctx.state.operator = operator.name;
    await next();
  };
}
