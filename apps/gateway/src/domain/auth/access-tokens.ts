import { randomUUID } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors } from 'jose';
import { verificationKey, type SigningKeys } from './signing-keys';

/** Access tokens: EdDSA JWTs with iss, aud, sub (tenant id), iat, exp, jti and token_id. */
export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

export interface AccessTokenClaims {
  tenantId: string;
  /** The integration token it descends from: revoking that token invalidates this JWT. */
  tokenId: string;
  expiresAt: number;
}

/** What an expired JWT is told: how to get the next one. */
export const ACCESS_TOKEN_EXPIRED =
  'the access token has expired: get a new one from POST /api/v1/authenticate with your integration token (POST /api/v1/refresh-token renews an access token before it expires)';

export class InvalidAccessTokenError extends Error {
  override readonly name = 'InvalidAccessTokenError';
  /**
   * True when the token is ours and well signed but past its expiry: the ERP then only needs a new
   * one, and is told so by a code of its own (token_expired, docs/api.md, Authentication).
   */
  constructor(
    message: string,
    readonly expired = false,
  ) {
    super(message);
  }
}

export async function issueAccessToken(
  keys: SigningKeys,
  settings: AccessTokenSettings,
  tenantId: string,
  tokenId: string,
): Promise<{ token: string; expiresIn: number }> {
  const token = await new SignJWT({ token_id: tokenId })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: keys.kid })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject(tenantId)
    .setIssuedAt()
    .setExpirationTime(`${settings.ttlSeconds}s`)
    .setJti(randomUUID())
    .sign(keys.privateKey);
  return { token, expiresIn: settings.ttlSeconds };
}

export async function verifyAccessToken(
  keys: SigningKeys,
  settings: AccessTokenSettings,
  token: string,
): Promise<AccessTokenClaims> {
  try {
    // The kid picks the key: the current one, or a previous one still trusted during a key rotation.
    const key = verificationKey(keys, decodeProtectedHeader(token).kid);
    if (!key) throw new joseErrors.JWSSignatureVerificationFailed('no key of ours has this kid');
    const { payload } = await jwtVerify(token, key, {
      issuer: settings.issuer,
      audience: settings.audience,
      algorithms: ['EdDSA'],
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
    });
    if (typeof payload.token_id !== 'string' || typeof payload.sub !== 'string')
      throw new InvalidAccessTokenError('token lacks its subject');
    return { tenantId: payload.sub, tokenId: payload.token_id, expiresAt: payload.exp! };
  } catch (err) {
    if (err instanceof InvalidAccessTokenError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new InvalidAccessTokenError(ACCESS_TOKEN_EXPIRED, true);
    throw new InvalidAccessTokenError(
      'the access token is not valid: send the access_token that POST /api/v1/authenticate returned',
    );
  }
}
