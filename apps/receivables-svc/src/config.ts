import { readFileSync } from 'node:fs';
import {
  busCredentialChecks,
  ConfigError,
  DEV_INTER_SANDBOX_CA_FILE,
  DEV_INTER_SANDBOX_PORT,
  devInterSandboxBaseUrl,
  envInt,
  envOptional,
  envString,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';
import { INTER_PRODUCTION_BASE_URL } from '@payments/inter-cobranca';
import { HISTORY_RETENTION_DAYS_DEFAULT } from './db/partitioned-tables';
import { INTER_DEFAULT_LIMITS, INTER_ENDPOINTS, type InterEndpoint } from './transport/providers/inter/client';
import {
  CredentialSealError,
  DEV_CREDENTIALS_ENCRYPTION_KEY,
  parseKeyring,
  type Keyring,
} from '@payments/credential-seal';
import { DEV_DOWNLOAD_LINK_SECRET, downloadLinkSecret } from '@payments/signed-links';

/** The bank sandbox's public development credentials (its BANK_SANDBOX_API_KEY and _WEBHOOK_SECRET defaults). */
export const DEV_PROVIDER_API_KEY = 'sandbox-api-key';
export const DEV_PROVIDER_WEBHOOK_SECRET = 'sandbox-webhook-secret';

/** DATABASE_POOL_SIZE unless set, twice the others': registration workers, the outbox relay and provider webhooks share it. */
export const DATABASE_POOL_SIZE_DEFAULT = 20;

/**
 * receivables-svc's settings. Each field is named after its variable (REGISTRATION_CONCURRENCY is
 * registrationConcurrency, PROVIDER_TIMEOUT_MS provider.timeoutMs); docs/configuration.md lists them.
 */
export interface ReceivablesConfig extends CommonConfig {
  /** receivables-svc's own HTTP port (provider webhooks). */
  port: number;
  /** RECEIVABLES_PUBLIC_URL: where banks reach this service's webhooks (Inter is told `${publicUrl}/provider/webhooks/inter/{account_id}`). */
  publicUrl: string;
  /** The bank sandbox (PROVIDER_*): one API key for every sandbox account. */
  provider: { baseUrl: string; apiKey: string; timeoutMs: number; retries: number; webhookSecret: string };
  /**
   * Banco Inter: API root of accounts that name none (INTER_BASE_URL), and a CA to trust besides the
   * public ones (INTER_TRUSTED_CA_FILE: the bank sandbox's CA; unset against Inter). In development both
   * default to the bank sandbox's Inter dialect: its CA file is then read at the first Inter call (the
   * sandbox creates it on its first start), while a file set explicitly is read and checked at start.
   * callLimits: calls a minute per endpoint and bank account for all instances together
   * (INTER_CALL_LIMITS, e.g. "create=120,webhook=5"); callWaitMaxMs: how long a call waits for its
   * budget before it is left for a later attempt (INTER_CALL_WAIT_MAX_MS).
   */
  inter: {
    baseUrl: string;
    trustedCaPem?: string;
    /** Development's default CA file (the sandbox's), read at the first Inter call: see trustedInterCa. */
    trustedCaFileAtFirstCall?: string;
    callLimits: Record<InterEndpoint, number>;
    callWaitMaxMs: number;
  };
  /**
   * CREDENTIALS_ENCRYPTION_KEY (32 bytes) with CREDENTIALS_PREVIOUS_KEYS: opens the accounts' sealed
   * credentials, also those sealed before a key rotation.
   */
  credentialsEncryptionKey: Keyring;
  /** PUBLIC_BASE_URL: the gateway's public address, base of the signed slip PDF links. */
  publicBaseUrl: string;
  /** DOWNLOAD_LINK_SECRET: signs the slip PDF links (the gateway checks them). */
  downloadLinkSecret: string;
  /** Registration jobs (chunks of 100 receivables) handled at once; cancellations get a quarter. */
  registrationConcurrency: number;
  /** Zone in which zoneless datetimes (payment_date) are written. */
  timeZone: string;
  /** PROVIDER_RECONCILE_INTERVAL_MS: how often each bank account with open charges is swept with the bank's lists. */
  providerReconcileIntervalMs: number;
  /** RECEIVABLE_HISTORY_RETENTION_DAYS: a month of state history is dropped once wholly older than this. */
  receivableHistoryRetentionDays: number;
}

export function loadReceivablesConfig(env: Record<string, string | undefined> = process.env): ReceivablesConfig {
  const common = loadCommonConfig(env, { databasePoolSize: DATABASE_POOL_SIZE_DEFAULT });
  requireProductionSecrets(common.nodeEnv, [
    {
      variable: 'PROVIDER_API_KEY',
      value: envOptional('PROVIDER_API_KEY', env),
      developmentDefaults: [DEV_PROVIDER_API_KEY],
      hint: "the provider's API key",
    },
    {
      variable: 'PROVIDER_WEBHOOK_SECRET',
      value: envOptional('PROVIDER_WEBHOOK_SECRET', env),
      developmentDefaults: [DEV_PROVIDER_WEBHOOK_SECRET],
      hint: 'the key the provider signs its webhooks with',
    },
    {
      variable: 'CREDENTIALS_ENCRYPTION_KEY',
      value: envOptional('CREDENTIALS_ENCRYPTION_KEY', env),
      developmentDefaults: [DEV_CREDENTIALS_ENCRYPTION_KEY],
      hint: 'openssl rand -base64 32, the same as the gateway',
    },
    {
      variable: 'DOWNLOAD_LINK_SECRET',
      value: envOptional('DOWNLOAD_LINK_SECRET', env),
      developmentDefaults: [DEV_DOWNLOAD_LINK_SECRET],
      hint: 'the same as the gateway',
    },
    ...busCredentialChecks(common),
    ...databaseCredentialChecks(common),
  ]);
  const port = envInt('RECEIVABLES_PORT', 3200, env);
  const publicUrl = envString('RECEIVABLES_PUBLIC_URL', `http://127.0.0.1:${port}`, env).replace(/\/+$/, '');
  // Inter takes only https webhook URLs; the development sandbox also takes http ones.
  if (common.nodeEnv === 'production' && !publicUrl.startsWith('https://'))
    throw new ConfigError(
      `RECEIVABLES_PUBLIC_URL must be an https:// URL in production (banks send webhooks only to https), got ${publicUrl}`,
    );
  return {
    ...common,
    port,
    publicUrl,
    provider: {
      baseUrl: envString('PROVIDER_BASE_URL', 'http://127.0.0.1:3100', env),
      apiKey: envString('PROVIDER_API_KEY', DEV_PROVIDER_API_KEY, env),
      timeoutMs: envInt('PROVIDER_TIMEOUT_MS', 15_000, env, 1),
      retries: envInt('PROVIDER_RETRIES', 2, env),
      webhookSecret: envString('PROVIDER_WEBHOOK_SECRET', DEV_PROVIDER_WEBHOOK_SECRET, env),
    },
    inter: interConfig(env, common.nodeEnv),
    credentialsEncryptionKey: credentialsKey(env),
    publicBaseUrl: envString('PUBLIC_BASE_URL', `http://localhost:${envInt('PORT', 3000, env)}`, env),
    downloadLinkSecret: downloadLinkSecret(env, common.nodeEnv),
    registrationConcurrency: envInt('REGISTRATION_CONCURRENCY', 4, env, 1),
    timeZone: envString('TIME_ZONE', 'America/Sao_Paulo', env),
    // Production sweeps every 5 minutes; npm start (development) every 30 s, so a lost notice shows soon.
    providerReconcileIntervalMs: envInt(
      'PROVIDER_RECONCILE_INTERVAL_MS',
      common.nodeEnv === 'production' ? 300_000 : 30_000,
      env,
      1_000,
    ),
    receivableHistoryRetentionDays: envInt('RECEIVABLE_HISTORY_RETENTION_DAYS', HISTORY_RETENTION_DAYS_DEFAULT, env, 1),
  };
}

/** Inter's root, trusted CA and call limits; in development the bank sandbox's Inter dialect by default. */
function interConfig(
  env: Record<string, string | undefined>,
  mode: CommonConfig['nodeEnv'],
): ReceivablesConfig['inter'] {
  const development = mode === 'development';
  const sandboxUrl = devInterSandboxBaseUrl(envInt('BANK_SANDBOX_INTER_PORT', DEV_INTER_SANDBOX_PORT, env, 1));
  const explicitCa = envOptional('INTER_TRUSTED_CA_FILE', env) !== undefined;
  return {
    baseUrl: envString('INTER_BASE_URL', development ? sandboxUrl : INTER_PRODUCTION_BASE_URL, env),
    trustedCaPem: explicitCa ? pemFile('INTER_TRUSTED_CA_FILE', env) : undefined,
    trustedCaFileAtFirstCall: !explicitCa && development ? DEV_INTER_SANDBOX_CA_FILE : undefined,
    callLimits: callLimits(envOptional('INTER_CALL_LIMITS', env)),
    callWaitMaxMs: envInt('INTER_CALL_WAIT_MAX_MS', 30_000, env),
  };
}

/**
 * The CA the Inter adapter trusts besides the public ones: the file set at start, or the development
 * default read when it is first needed (a missing file then fails that call, naming the variable).
 */
export function trustedInterCa(inter: ReceivablesConfig['inter']): string | (() => string) | undefined {
  const later = inter.trustedCaFileAtFirstCall;
  return inter.trustedCaPem ?? (later ? () => readPem('INTER_TRUSTED_CA_FILE', later) : undefined);
}

/** INTER_CALL_LIMITS: "endpoint=calls a minute" pairs, comma separated, over Inter's published limits. */
function callLimits(text: string | undefined): Record<InterEndpoint, number> {
  const limits = { ...INTER_DEFAULT_LIMITS };
  for (const pair of (text ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z-]+)=(\d+)$/.exec(pair);
    const endpoint = match?.[1] as InterEndpoint | undefined;
    if (!match || !endpoint || !INTER_ENDPOINTS.includes(endpoint) || Number(match[2]) < 1)
      throw new ConfigError(
        `INTER_CALL_LIMITS: "${pair}" is not <endpoint>=<calls a minute, at least 1> with an endpoint of ${INTER_ENDPOINTS.join(', ')}`,
      );
    limits[endpoint] = Number(match[2]);
  }
  return limits;
}

/** Development falls back to the public default key (production refused it above). */
function credentialsKey(env: Record<string, string | undefined>): Keyring {
  try {
    return parseKeyring(
      envOptional('CREDENTIALS_ENCRYPTION_KEY', env) ?? DEV_CREDENTIALS_ENCRYPTION_KEY,
      envOptional('CREDENTIALS_PREVIOUS_KEYS', env),
    );
  } catch (err) {
    if (err instanceof CredentialSealError) throw new ConfigError(err.message);
    throw err;
  }
}

/** A PEM file named by an optional variable, read at start (a missing file is a ConfigError naming it). */
function pemFile(name: string, env: Record<string, string | undefined>): string | undefined {
  const path = envOptional(name, env);
  return path === undefined ? undefined : readPem(name, path);
}

/** A PEM certificate file; a ConfigError naming the variable when it cannot be read or holds none. */
function readPem(name: string, path: string): string {
  try {
    const text = readFileSync(path, 'utf8');
    if (!text.includes('-----BEGIN CERTIFICATE-----'))
      throw new ConfigError(`${name}: ${path} holds no PEM certificate`);
    return text;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
