import { envInt, envOptional, envString, loadCommonConfig, type CommonConfig } from '@payments/config';
import { downloadLinkSecret } from '@payments/signed-links';

/**
 * The gateway's settings. Each field is named after its variable (PORT is port, JWT_TTL_SECONDS is
 * jwt.ttlSeconds); docs/configuration.md lists them with their defaults.
 */
export interface GatewayConfig extends CommonConfig {
  port: number;
  /** Base of links the gateway hands out (booklet downloads). */
  publicBaseUrl: string;
  jwt: {
    issuer: string;
    audience: string;
    ttlSeconds: number;
    /** PKCS#8 PEM of an Ed25519 key. Required in production; generated and kept in Postgres in development. */
    privateKey?: string;
  };
  /** Per-tenant token bucket: sustained requests per second and bucket size. 0 turns it off. */
  rateLimit: { perSecond: number; burst: number };
  bodyLimitBytes: number;
  idempotency: { ttlHours: number; lockTimeoutMs: number };
  /** Checks the signed booklet download links booklet-svc hands out (same secret there). */
  downloadLinkSecret: string;
}

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const common = loadCommonConfig(env);
  const port = envInt('PORT', 3000, env);
  return {
    ...common,
    port,
    publicBaseUrl: envString('PUBLIC_BASE_URL', `http://localhost:${port}`, env),
    jwt: {
      issuer: envString('JWT_ISSUER', 'payments-gateway', env),
      audience: envString('JWT_AUDIENCE', 'payments-api', env),
      ttlSeconds: envInt('JWT_TTL_SECONDS', 3600, env, 1),
      privateKey: envOptional('JWT_PRIVATE_KEY', env),
    },
    rateLimit: { perSecond: envInt('RATE_LIMIT_PER_SECOND', 100, env), burst: envInt('RATE_LIMIT_BURST', 200, env) },
    bodyLimitBytes: envInt('BODY_LIMIT_BYTES', 1024 * 1024, env, 1),
    idempotency: {
      ttlHours: envInt('IDEMPOTENCY_TTL_HOURS', 24, env, 1),
      // A key locked longer than this belongs to a request that died with its gateway: it may be taken over.
      lockTimeoutMs: envInt('IDEMPOTENCY_LOCK_TIMEOUT_MS', 2 * common.busTimeoutMs + 5_000, env, 1),
    },
    downloadLinkSecret: downloadLinkSecret(env, common.nodeEnv),
  };
}
