import type { Client } from 'openapi-fetch';
import { PaymentsApiError } from './errors';
import type { paths } from './generated/openapi';

export interface AccessToken {
  token: string;
  /** Epoch milliseconds when the gateway stops accepting it (the JWT's exp). */
  expiresAt: number;
  /** Epoch milliseconds when it was issued (the JWT's iat). */
  issuedAt: number;
  /** As the gateway answered: `Bearer` from /authenticate, `bearer` from /refresh-token (the interface's spellings). */
  tokenType: string;
  expiresInSeconds: number;
}

export interface TokenOptions {
  /** Refresh this long before exp (default 60 s, at most half the token's lifetime). */
  refreshMarginSeconds?: number;
  /** For tests: the clock, in epoch milliseconds. */
  now?: () => number;
}

/**
 * Keeps a valid JWT: exchanges the integration token for one (POST /authenticate), renews it with
 * POST /refresh-token shortly before its exp, and authenticates again when renewing is refused or
 * the token has already expired. Concurrent callers share one exchange.
 */
export class TokenManager {
  private cached: AccessToken | undefined;
  private pending: Promise<AccessToken> | undefined;
  private readonly marginMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: Client<paths>,
    private readonly integrationToken: string,
    options: TokenOptions = {},
  ) {
    this.marginMs = (options.refreshMarginSeconds ?? 60) * 1000;
    this.now = options.now ?? Date.now;
  }

  /** A JWT valid for at least the refresh margin (or half its lifetime), fetched only when needed. */
  async accessToken(): Promise<string> {
    return (await this.token()).token;
  }

  /** The same, with what the gateway said of it. */
  async token(): Promise<AccessToken> {
    const token = this.cached;
    if (token && this.now() < token.expiresAt - this.marginOf(token)) return token;
    this.pending ??= this.renew(token).finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the JWT, so the next call authenticates again (e.g. after the tenant's token was reissued). */
  reset(): void {
    this.cached = undefined;
  }

  private marginOf(token: AccessToken): number {
    return Math.min(this.marginMs, (token.expiresAt - token.issuedAt) / 2);
  }

  private async renew(token: AccessToken | undefined): Promise<AccessToken> {
    const renewed = token && this.now() < token.expiresAt ? await this.refresh(token.token) : undefined;
    this.cached = renewed ?? (await this.authenticate());
    return this.cached;
  }

  private async authenticate(): Promise<AccessToken> {
    const { data, error, response } = await this.client.POST('/api/v1/authenticate', {
      headers: { Authorization: `Bearer ${this.integrationToken}` },
    });
    if (!data) throw PaymentsApiError.of('POST /api/v1/authenticate', response, error);
    return this.accessTokenOf(data.access_token, data.token_type, data.expires_in);
  }

  /** undefined when the gateway refuses to renew (then a new authentication is the way). */
  private async refresh(jwt: string): Promise<AccessToken | undefined> {
    const { data, error, response } = await this.client.POST('/api/v1/refresh-token', {
      headers: { Authorization: `Bearer ${jwt}` },
    });
    if (response.status === 401) return undefined;
    if (!data) throw PaymentsApiError.of('POST /api/v1/refresh-token', response, error);
    return this.accessTokenOf(data.access_token, data.token_type, data.expires_in);
  }

  private accessTokenOf(jwt: string, tokenType: string, expiresIn: number): AccessToken {
    const claims = jwtClaims(jwt);
    const now = this.now();
    // The JWT's own exp and iat are what the gateway checks; expires_in is the fallback.
    const expiresAt = claims.exp !== undefined ? claims.exp * 1000 : now + expiresIn * 1000;
    const issuedAt = claims.iat !== undefined ? claims.iat * 1000 : now;
    return { token: jwt, expiresAt, issuedAt, tokenType, expiresInSeconds: expiresIn };
  }
}

/** The exp and iat claims of a JWT, read without verifying it (the gateway verifies it; we only schedule). */
export function jwtClaims(jwt: string): { exp?: number; iat?: number } {
  const payload = jwt.split('.')[1];
  if (!payload) return {};
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) return {};
    const { exp, iat } = claims as Record<string, unknown>;
    return {
      exp: typeof exp === 'number' ? exp : undefined,
      iat: typeof iat === 'number' ? iat : undefined,
    };
  } catch {
    return {};
  }
}
