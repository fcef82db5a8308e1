import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  busCredentialChecks,
  ConfigError,
  envInt,
  envOptional,
  envString,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, CredentialSealError, parseEncryptionKey } from '@payments/credential-seal';
import { DEV_DOWNLOAD_LINK_SECRET, downloadLinkSecret } from '@payments/signed-links';

type Env = Record<string, string | undefined>;

/**
 * The gateway's settings. Each field is named after its variable (PORT is port, JWT_TTL_SECONDS is
 * jwt.ttlSeconds); docs/configuration.md lists them with their defaults.
 */
export interface GatewayConfig extends CommonConfig {
  port: number;
  /** ADMIN_PORT: the admin API's own port, never the public one; keep it private. */
  adminPort: number;
  /** Base of links the gateway hands out (booklet downloads). */
  publicBaseUrl: string;
  jwt: {
    issuer: string;
    audience: string;
    ttlSeconds: number;
    /**
     * PKCS#8 PEM of an Ed25519 key (JWT_PRIVATE_KEY, or the file JWT_PRIVATE_KEY_FILE names). Required
     * in production, where it is never written to the database; generated and kept in Postgres in development.
     */
    privateKey?: string;
    /**
     * SPKI PEMs of the keys that signed tokens before the current one (JWT_PREVIOUS_PUBLIC_KEYS, or the
     * file JWT_PREVIOUS_PUBLIC_KEYS_FILE names): their tokens stay valid during a key rotation.
     */
    previousPublicKeys: string[];
  };
  /** Per-tenant token bucket of charges (a batch costs its size, other requests 1): per second and bucket size. 0 turns it off. */
  rateLimit: {
    perSecond: number;
    burst: number;
    /** Calls of /authenticate and /refresh-token per client address per minute. 0 turns it off. */
    authPerMinute: number;
    /** Calls of /authenticate and /refresh-token per credential (counted by its hash) per minute. 0: off. */
    authTokenPerMinute: number;
    /** Signed downloads (booklets, slip PDFs and QR codes) per client address per minute. 0: off. */
    downloadsPerMinute: number;
  };
  /** Reverse proxies in front of the gateway that append X-Forwarded-For; 0 = the TCP peer is the client. */
  trustedProxyHops: number;
  bodyLimitBytes: number;
  /**
   * REQUEST_TIMEOUT_MS: how long a request's body may take to arrive. A client trickling its upload is
   * answered 408 and cut off, instead of holding a connection and its memory.
   */
  requestTimeoutMs: number;
  idempotency: { ttlHours: number; lockTimeoutMs: number };
  /** Checks the signed booklet download links booklet-svc hands out (same secret there). */
  downloadLinkSecret: string;
  /** CREDENTIALS_ENCRYPTION_KEY (32 bytes): seals what the gateway keeps encrypted at rest. */
  credentialsEncryptionKey: Buffer;
  /** CREDENTIALS_PREVIOUS_KEYS: older keys that still open rows sealed before a key rotation. */
  credentialsPreviousKeys: Buffer[];
}

export function loadGatewayConfig(env: Env = process.env): GatewayConfig {
  const common = loadCommonConfig(env);
  const privateKey = pemSetting('JWT_PRIVATE_KEY', env);
  const credentialsKey = envOptional('CREDENTIALS_ENCRYPTION_KEY', env);
  requireProductionSecrets(common.nodeEnv, [
    {
      variable: 'JWT_PRIVATE_KEY',
      value: privateKey,
      hint: 'PKCS#8 PEM of an Ed25519 key, or JWT_PRIVATE_KEY_FILE naming one: openssl genpkey -algorithm ed25519',
    },
    {
      variable: 'DOWNLOAD_LINK_SECRET',
      value: envOptional('DOWNLOAD_LINK_SECRET', env),
      developmentDefaults: [DEV_DOWNLOAD_LINK_SECRET],
      hint: 'the same as booklet-svc and receivables-svc',
    },
    {
      variable: 'CREDENTIALS_ENCRYPTION_KEY',
      value: credentialsKey,
      developmentDefaults: [DEV_CREDENTIALS_ENCRYPTION_KEY],
      hint: 'openssl rand -base64 32, the same as receivables-svc',
    },
    ...busCredentialChecks(common),
    ...databaseCredentialChecks(common),
  ]);
  const port = envInt('PORT', 3000, env);
  return {
    ...common,
    port,
    adminPort: adminPort(port, env),
    publicBaseUrl: envString('PUBLIC_BASE_URL', `http://localhost:${port}`, env),
    jwt: {
      issuer: envString('JWT_ISSUER', 'payments-gateway', env),
      audience: envString('JWT_AUDIENCE', 'payments-api', env),
      ttlSeconds: envInt('JWT_TTL_SECONDS', 3600, env, 1),
      privateKey: privateKey === undefined ? undefined : checkedPrivateKey(privateKey),
      previousPublicKeys: previousPublicKeys(env),
    },
    rateLimit: {
      // Charges, not requests: a 1,000-charge batch at once, 5,000 charges a second.
      perSecond: envInt('RATE_LIMIT_PER_SECOND', 5_000, env),
      // At least 1: a burst of 0 with the limit on would refuse every request (PER_SECOND 0 turns it off).
      burst: envInt('RATE_LIMIT_BURST', 5_000, env, 1),
      authPerMinute: envInt('RATE_LIMIT_AUTH_PER_MINUTE', 120, env),
      authTokenPerMinute: envInt('RATE_LIMIT_AUTH_TOKEN_PER_MINUTE', 30, env),
      downloadsPerMinute: envInt('RATE_LIMIT_DOWNLOADS_PER_MINUTE', 600, env),
    },
    trustedProxyHops: envInt('TRUSTED_PROXY_HOPS', 0, env),
    bodyLimitBytes: envInt('BODY_LIMIT_BYTES', 1024 * 1024, env, 1),
    requestTimeoutMs: envInt('REQUEST_TIMEOUT_MS', 30_000, env, 1),
    idempotency: {
      ttlHours: envInt('IDEMPOTENCY_TTL_HOURS', 24, env, 1),
      // A key locked longer than this belongs to a request that died with its gateway: it may be taken over.
      lockTimeoutMs: envInt('IDEMPOTENCY_LOCK_TIMEOUT_MS', 2 * common.busTimeoutMs + 5_000, env, 1),
    },
    downloadLinkSecret: downloadLinkSecret(env, common.nodeEnv),
    credentialsEncryptionKey: encryptionKey(credentialsKey ?? DEV_CREDENTIALS_ENCRYPTION_KEY),
    credentialsPreviousKeys: previousEncryptionKeys(env),
  };
}

/** How far above PORT the admin API listens unless ADMIN_PORT is set. */
export const ADMIN_PORT_OFFSET = 600;

/**
 * ADMIN_PORT: PORT + 600 by default (3600 beside the default 3000, clear of the apps' 3000-3500), so
 * that a second system on moved ports, or a test's gateway on a free port, does not take another's
 * admin port; any free port (0) when PORT is 0 or PORT + 600 is no port. It may not be PORT.
 */
function adminPort(port: number, env: Env): number {
  const fallback = port === 0 || port + ADMIN_PORT_OFFSET > 65_535 ? 0 : port + ADMIN_PORT_OFFSET;
  const admin = envInt('ADMIN_PORT', fallback, env);
  if (admin !== 0 && admin === port)
    throw new ConfigError(`ADMIN_PORT must differ from PORT (${port}): the admin API has a port of its own`);
  return admin;
}

/**
 * A PEM setting: the variable itself, or the file its `_FILE` twin names (a mounted secret). Both
 * set is ambiguous and refused.
 */
function pemSetting(name: string, env: Env): string | undefined {
  const inline = envOptional(name, env);
  const path = envOptional(`${name}_FILE`, env);
  if (inline !== undefined && path !== undefined) throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
  if (path === undefined) return inline;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

// Read here so a bad key stops the start naming its variable, not at the first token.
function checkedPrivateKey(pem: string): string {
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    throw new ConfigError('JWT_PRIVATE_KEY is not a PEM private key (PKCS#8 of an Ed25519 key)');
  }
  if (type !== 'ed25519')
    throw new ConfigError(`JWT_PRIVATE_KEY must be an Ed25519 key, got ${type ?? 'another kind'}`);
  return pem;
}

const PUBLIC_KEY_PEM = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;

/** Every `BEGIN PUBLIC KEY` block of JWT_PREVIOUS_PUBLIC_KEYS(_FILE), each an Ed25519 key. */
function previousPublicKeys(env: Env): string[] {
  const text = pemSetting('JWT_PREVIOUS_PUBLIC_KEYS', env);
  if (text === undefined) return [];
  const pems = text.match(PUBLIC_KEY_PEM) ?? [];
  if (pems.length === 0)
    throw new ConfigError('JWT_PREVIOUS_PUBLIC_KEYS holds no -----BEGIN PUBLIC KEY----- block (SPKI PEM)');
  pems.forEach((pem, i) => {
    let type: string | undefined;
    try {
      type = createPublicKey(pem).asymmetricKeyType;
    } catch {
      throw new ConfigError(`JWT_PREVIOUS_PUBLIC_KEYS: key ${i + 1} is not a valid public key`);
    }
    if (type !== 'ed25519')
      throw new ConfigError(
        `JWT_PREVIOUS_PUBLIC_KEYS: key ${i + 1} must be an Ed25519 key, got ${type ?? 'another kind'}`,
      );
  });
  return pems;
}

/** CREDENTIALS_PREVIOUS_KEYS, comma-separated (the development key may be one: rows sealed with it open). */
function previousEncryptionKeys(env: Env): Buffer[] {
  return (envOptional('CREDENTIALS_PREVIOUS_KEYS', env) ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '')
    .map((k) => encryptionKey(k, 'each key of CREDENTIALS_PREVIOUS_KEYS'));
}

function encryptionKey(base64: string, variable?: string): Buffer {
  try {
    return parseEncryptionKey(base64, variable);
  } catch (err) {
    if (err instanceof CredentialSealError) throw new ConfigError(err.message);
    throw err;
  }
}
