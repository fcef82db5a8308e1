import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { OPERATOR_CREDENTIAL_PREFIX, ServiceError } from '@payments/contracts';
import type { GatewayDatabase } from '../../db/schema';
import type { GatewayContext } from './context';
import { bearerCredential } from './bearer';
import {
  InvalidAccessTokenError,
  verifyAccessToken,
  type AccessTokenClaims,
  type AccessTokenSettings,
} from '../../domain/auth/access-tokens';
import { LRUCache } from 'lru-cache';
import { MicroBatcher } from '@payments/micro-batch';
import { credentialStates, type ActiveCredential, type CredentialState } from '../../db/credential-store';
import { INTEGRATION_TOKEN_PREFIX } from '../../domain/tenancy/credentials';
import type { SigningKeys } from '../../domain/auth/signing-keys';

/** What an integration token sent to a protected endpoint is told. */
export const INTEGRATION_TOKEN_HERE =
  'this is an integration token: exchange it for an access token (JWT) at POST /api/v1/authenticate (Authorization: Bearer <integration token>) and send that access token here';

/**
 * Credentials checked (with their tenants' accounts) in one query at most: those of every request that
 * arrived during the previous one.
 */
const CHECKS_PER_QUERY = 256;
/** Queries at once: one runs while the next gathers. */
const CHECKS_RUNNING = 2;
/**
 * Access tokens whose signature was verified, remembered so that an ERP's next requests with the same
 * token skip the signature check (a large share of the gateway's CPU per request): bounded in number,
 * each kept until its expiry or this long, whichever comes first.
 */
const VERIFIED_TOKENS = 10_000;
const VERIFIED_TOKEN_TTL_MS = 60_000;

/**
 * Protected endpoints: a valid, unexpired JWT of ours whose tenant and integration token are still
 * active. Anything else is 401 UNAUTHORIZED and the request goes no further: code token_expired for a
 * token of ours past its expiry, unauthorized for all else.
 */
export function requireAccessToken(db: Kysely<GatewayDatabase>, keys: SigningKeys, settings: AccessTokenSettings) {
  // Asked at every request, so a revocation applies at once, and a new account from the next request;
  // concurrent requests share one query.
  const checks = new MicroBatcher<ActiveCredential, CredentialState>({
    maxItems: CHECKS_PER_QUERY,
    maxRunning: CHECKS_RUNNING,
    run: async (credentials) => (await credentialStates(db, credentials)).map((value) => ({ ok: true, value })),
  });
  const verified = new LRUCache<string, AccessTokenClaims>({ max: VERIFIED_TOKENS, ttl: VERIFIED_TOKEN_TTL_MS });
  const claimsOf = async (token: string): Promise<AccessTokenClaims> => {
    const known = verified.get(token);
    // An expired token is verified again, which refuses it as expired.
    if (known && known.expiresAt * 1000 > Date.now()) return known;
    const claims = await verifyAccessToken(keys, settings, token);
    verified.set(token, claims);
    return claims;
  };
  return async (ctx: GatewayContext, next: Next) => {
    const token = bearerCredential(ctx.get('authorization'));
    if (!token)
      throw new ServiceError(
        'unauthorized',
        'send Authorization: Bearer <access token>; POST /api/v1/authenticate with your integration token returns one',
      );
    // The usual first mistake: the integration token itself, where its JWT belongs.
    if (token.startsWith(INTEGRATION_TOKEN_PREFIX)) throw new ServiceError('unauthorized', INTEGRATION_TOKEN_HERE);
    // An operator credential opens the admin port only (ADMIN_PORT), never the public API.
    if (token.startsWith(OPERATOR_CREDENTIAL_PREFIX))
      throw new ServiceError('unauthorized', 'this is an operator credential: it is taken on the admin port only');
    let claims;
    try {
      claims = await claimsOf(token);
    } catch (err) {
      if (err instanceof InvalidAccessTokenError)
        throw new ServiceError(err.expired ? 'token_expired' : 'unauthorized', err.message);
      throw err;
    }
    const state = await checks.submit({ tenantId: claims.tenantId, tokenId: claims.tokenId });
    if (!state.active)
      throw new ServiceError('unauthorized', 'the integration token behind this access token was revoked');
    ctx.state.tenantId = claims.tenantId;
    ctx.state.tokenId = claims.tokenId;
    ctx.state.providerAccount = state.account;
    await next();
  };
}
