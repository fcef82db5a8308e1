import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import type { GatewayDatabase } from '../db/schema';
import type { GatewayContext } from '../http/context';
import { bearerCredential } from '../http/bearer';
import { InvalidAccessTokenError, verifyAccessToken, type AccessTokenSettings } from './access-tokens';
import { isCredentialActive } from './credential-store';
import type { SigningKeys } from './signing-keys';

/**
 * Protected endpoints: a valid, unexpired JWT of ours whose tenant and integration token are still
 * active. Anything else is 401 UNAUTHORIZED and the request goes no further.
 */
export function requireAccessToken(db: Kysely<GatewayDatabase>, keys: SigningKeys, settings: AccessTokenSettings) {
  return async (ctx: GatewayContext, next: Next) => {
    const token = bearerCredential(ctx.get('authorization'));
    if (!token) throw new ServiceError('unauthorized', 'send Authorization: Bearer <access token>');
    let claims;
    try {
      claims = await verifyAccessToken(keys, settings, token);
    } catch (err) {
      if (err instanceof InvalidAccessTokenError) throw new ServiceError('unauthorized', err.message);
      throw err;
    }
    if (!(await isCredentialActive(db, claims.tenantId, claims.tokenId))) {
      throw new ServiceError('unauthorized', 'the integration token behind this access token was revoked');
    }
    ctx.state.tenantId = claims.tenantId;
    ctx.state.tokenId = claims.tokenId;
    await next();
  };
}
