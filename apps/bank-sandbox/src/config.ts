import {
  ConfigError,
  envEnum,
  envInt,
  envIntList,
  envOptional,
  envString,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';
import { MAX_MERCHANT_CITY, MAX_MERCHANT_NAME, toMerchantText } from './domain/br-code';
import { BEHAVIOUR_MODES, type BehaviourMode } from './domain/behaviour';
import type { PayeeDetails } from './domain/slip-pdf';
import type { PayeeAccount } from './domain/slip-issuer';
import type { WebhookSettings } from './domain/webhook-dispatcher';
import { loadInterSandboxConfig, type InterSandboxConfig } from './inter-config';

/**
 * The bank sandbox's settings: BANK_SANDBOX_<NAME> is field <name> (BANK_SANDBOX_WEBHOOK_RETRY_MS is
 * webhook.retryMs, BANK_SANDBOX_PIX_KEY account.pix.key); docs/configuration.md lists them all.
 */
export interface BankSandboxConfig extends Pick<
  CommonConfig,
  'nodeEnv' | 'databaseUrl' | 'databasePoolSize' | 'logLevel' | 'shutdownGraceMs'
> {
  /** 0 = any free port (tests). */
  port: number;
  /** Base of the pdf and QR-code links in charges; undefined = http://localhost:<listening port>. */
  publicUrl?: string;
  apiKey: string;
  /** How long "slow" registrations wait before answering. */
  slowMs: number;
  /** The behaviour it starts in (POST /sandbox/behaviour changes it). */
  mode: BehaviourMode;
  account: PayeeAccount;
  payee: PayeeDetails;
  webhook: WebhookSettings;
  /** The Inter Cobrança v3 dialect (HTTPS, mutual TLS): BANK_SANDBOX_INTER_*. */
  inter: InterSandboxConfig;
}

export const DEFAULT_WEBHOOK_RETRY_MS = [500, 2_000, 5_000, 15_000, 60_000];

/** Public development credentials (receivables-svc's PROVIDER_API_KEY and PROVIDER_WEBHOOK_SECRET defaults). */
export const DEV_API_KEY = 'sandbox-api-key';
export const DEV_WEBHOOK_SECRET = 'sandbox-webhook-secret';

export function loadBankSandboxConfig(env: Record<string, string | undefined> = process.env): BankSandboxConfig {
  const common = loadCommonConfig(env);
  // A sandbox run as production (a staging system) must not keep the secrets everyone knows.
  requireProductionSecrets(common.nodeEnv, [
    {
      variable: 'BANK_SANDBOX_API_KEY',
      value: envOptional('BANK_SANDBOX_API_KEY', env),
      developmentDefaults: [DEV_API_KEY],
      hint: "receivables-svc's PROVIDER_API_KEY",
    },
    {
      variable: 'BANK_SANDBOX_WEBHOOK_SECRET',
      value: envOptional('BANK_SANDBOX_WEBHOOK_SECRET', env),
      developmentDefaults: [DEV_WEBHOOK_SECRET],
      hint: "receivables-svc's PROVIDER_WEBHOOK_SECRET, e.g. whsec_ and openssl rand -base64 32",
    },
    ...databaseCredentialChecks(common),
  ]);
  const digits = (name: string, fallback: string, size: number) => {
    const value = envString(name, fallback, env);
    if (!new RegExp(`^\\d{${size}}$`).test(value))
      throw new ConfigError(`${name} must be ${size} digits, got "${value}"`);
    return value;
  };
  const merchantText = (name: string, fallback: string, max: number) => {
    const value = toMerchantText(envString(name, fallback, env));
    if (value.length === 0 || value.length > max)
      throw new ConfigError(`${name} must be 1 to ${max} ASCII characters (accents are dropped), got "${value}"`);
    return value;
  };
  const bankCode = digits('BANK_SANDBOX_BANK_CODE', '999', 3);
  const agency = digits('BANK_SANDBOX_AGENCY', '0001', 4);
  const wallet = digits('BANK_SANDBOX_WALLET', '09', 2);
  const account = digits('BANK_SANDBOX_ACCOUNT', '0123456', 7);
  const payeeName = envString('BANK_SANDBOX_PAYEE_NAME', 'Payments Sandbox Ltda', env);
  const retryMs = envIntList('BANK_SANDBOX_WEBHOOK_RETRY_MS', DEFAULT_WEBHOOK_RETRY_MS, env);
  if (retryMs.length === 0) throw new ConfigError('BANK_SANDBOX_WEBHOOK_RETRY_MS must list at least one delay');
  return {
    nodeEnv: common.nodeEnv,
    databaseUrl: common.databaseUrl,
    databasePoolSize: common.databasePoolSize,
    logLevel: common.logLevel,
    shutdownGraceMs: common.shutdownGraceMs,
    port: envInt('BANK_SANDBOX_PORT', 3100, env),
    publicUrl: envOptional('BANK_SANDBOX_PUBLIC_URL', env)?.replace(/\/+$/, ''),
    apiKey: envString('BANK_SANDBOX_API_KEY', DEV_API_KEY, env),
    slowMs: envInt('BANK_SANDBOX_SLOW_MS', 3_000, env),
    mode: envEnum('BANK_SANDBOX_MODE', BEHAVIOUR_MODES, 'normal', env),
    account: {
      bankCode,
      agency,
      wallet,
      account,
      pix: {
        // A random-key (EVP) PIX key: a UUID, as the DICT issues them.
        key: envString('BANK_SANDBOX_PIX_KEY', '5f84a4c5-c5cb-4599-9f13-7eb4d419dacc', env),
        merchantName: merchantText('BANK_SANDBOX_PIX_MERCHANT_NAME', payeeName, MAX_MERCHANT_NAME),
        merchantCity: merchantText('BANK_SANDBOX_PIX_MERCHANT_CITY', 'Sao Paulo', MAX_MERCHANT_CITY),
      },
    },
    payee: {
      bankCode,
      bankName: envString('BANK_SANDBOX_BANK_NAME', 'Banco Sandbox', env),
      name: payeeName,
      taxId: envString('BANK_SANDBOX_PAYEE_TAX_ID', '11.222.333/0001-81', env),
      agency,
      wallet,
      account,
    },
    webhook: {
      url: envString('BANK_SANDBOX_WEBHOOK_URL', 'http://127.0.0.1:3200/provider/webhooks/bank-sandbox', env),
      secret: envString('BANK_SANDBOX_WEBHOOK_SECRET', DEV_WEBHOOK_SECRET, env),
      retryMs,
      // With the default schedule, about a day of retries once a minute before giving up.
      maxAttempts: envInt('BANK_SANDBOX_WEBHOOK_MAX_ATTEMPTS', 1_440, env, 1),
      timeoutMs: envInt('BANK_SANDBOX_WEBHOOK_TIMEOUT_MS', 10_000, env, 1),
      pollMs: envInt('BANK_SANDBOX_WEBHOOK_POLL_MS', 250, env, 10),
    },
    inter: loadInterSandboxConfig(env, common.nodeEnv),
  };
}
