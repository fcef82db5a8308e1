import type Router from '@koa/router';
import type { Kysely } from 'kysely';
import { ServiceError, type AuthenticateResponse, type RefreshTokenResponse } from '@payments/contracts';
import { issueAccessToken, type AccessTokenSettings } from '../../../domain/auth/access-tokens';
import { findActiveIntegrationToken } from '../../../db/credential-store';
import type { SigningKeys } from '../../../domain/auth/signing-keys';
import type { GatewayDatabase } from '../../../db/schema';
import { bearerCredential } from '../bearer';
import { authenticatedTenant, type GatewayContext, type GatewayState } from '../context';
import { authRateLimit, type ClientLimitSettings } from '../rate-limit';
import { mountOperation } from '../endpoint';
import { writeResponse } from '../error-handler';

/** What an access token sent to /authenticate is told (the reverse of the usual mix-up). */
const ACCESS_TOKEN_HERE =
  'this is an access token (JWT), not an integration token: POST /api/v1/authenticate takes the integration token issued for your tenant; to renew an access token, POST /api/v1/refresh-token with it';

/** A compact JWS: three base64url parts, the header a JSON object (`eyJ` is base64url of `{"`). */
function looksLikeJwt(credential: string): boolean {
  return /^eyJ[\w-]*\.[\w-]*\.[\w-]*$/.test(credential);
}

type Guard = (ctx: GatewayContext, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * POST /authenticate (integration token -> JWT) and POST /refresh-token (JWT -> new JWT), both
 * limited per client address and per credential before anything is looked up (429 over it), across
 * every gateway instance.
 */
export function mountAuthRoutes(
  router: Router<GatewayState>,
  deps: {
    db: Kysely<GatewayDatabase>;
    keys: SigningKeys;
    settings: AccessTokenSettings;
    requireAccessToken: Guard;
    limits: ClientLimitSettings;
  },
): void {
  const limit = authRateLimit(deps.db, deps.limits);
  mountOperation(router, 'authenticate', [
    limit,
    async (ctx) => {
      const credential = bearerCredential(ctx.get('authorization'));
      if (!credential) throw new ServiceError('unauthorized', 'send Authorization: Bearer <integration token>');
      const active = await findActiveIntegrationToken(deps.db, credential);
      if (!active)
        throw new ServiceError(
          'unauthorized',
          looksLikeJwt(credential) ? ACCESS_TOKEN_HERE : 'the integration token is not valid or was revoked',
        );
      const { token, expiresIn } = await issueAccessToken(deps.keys, deps.settings, active.tenantId, active.tokenId);
      const body: AuthenticateResponse = { access_token: token, token_type: 'Bearer', expires_in: expiresIn };
      writeResponse(ctx, { status: 200, body, headers: { 'cache-control': 'no-store' } });
    },
  ]);

  mountOperation(router, 'refreshToken', [
    limit,
    deps.requireAccessToken,
    async (ctx) => {
      const tenant = authenticatedTenant(ctx);
      const { token, expiresIn } = await issueAccessToken(deps.keys, deps.settings, tenant.tenantId, tenant.tokenId);
      const body: RefreshTokenResponse = { access_token: token, token_type: 'bearer', expires_in: expiresIn };
      writeResponse(ctx, { status: 200, body, headers: { 'cache-control': 'no-store' } });
    },
  ]);
}
