import type { Kysely } from 'kysely';
import { PIX_DIALECTS, type PixDialect } from '@payments/pix-api';
import type { PaymentProviders } from '../../domain/ports';
import { trustedInterCa, type ReceivablesConfig } from '../../config';
import { PostgresBankTokens } from '../../db/bank-tokens';
import { PostgresCallBudget } from '../../db/call-budget';
import type { ReceivablesDatabase } from '../../db/schema';
import type { BankShared } from './bank-shared';
import { BankSandboxProvider } from './bank-sandbox-provider';
import { InterCredentialSource, type NewestCredentials } from './credentials';
import { InterProvider } from './inter';
import { INTER_ENDPOINTS, type InterObserver, type InterShared } from './inter/client';
import { PixProvider } from './pix';
import { pixDefaultLimits, type PixShared } from './pix/client';
import { PIX_WEBHOOK_PATH } from './pix/webhook';

/** Path of an Inter account's payment webhook on this service (Inter is told the full URL per account). */
export const INTER_WEBHOOK_PATH = '/provider/webhooks/inter';

export function interWebhookUrl(publicUrl: string, accountId: string): string {
  return `${publicUrl}${INTER_WEBHOOK_PATH}/${accountId}`;
}

/** Where a bank's PIX API is told to post an account's PIX notices (it appends `/pix`): `inter` and `pix` accounts alike. */
export function pixWebhookUrl(publicUrl: string, accountId: string): string {
  return `${publicUrl}${PIX_WEBHOOK_PATH}/${accountId}`;
}

type SharedConfig = Pick<ReceivablesConfig, 'inter' | 'credentialsEncryptionKey'>;

/** The budgets and token every instance shares through this database, with `calls` a minute per endpoint. */
function bankShared<E extends string>(
  db: Kysely<ReceivablesDatabase>,
  config: SharedConfig,
  calls: Record<E, number>,
  windowMs: number,
): BankShared<E> {
  const limits = Object.fromEntries(
    Object.entries<number>(calls).map(([endpoint, n]) => [endpoint, { calls: n, windowMs }]),
  ) as BankShared<E>['limits'];
  return {
    budget: new PostgresCallBudget(db, config.inter.callWaitMaxMs),
    // The refresh lease outlasts the token budget's wait and the request itself.
    tokens: new PostgresBankTokens(db, config.credentialsEncryptionKey, config.inter.callWaitMaxMs + 30_000),
    limits,
  };
}

/** The budgets and token every instance shares through this database, with the configured limits a minute. */
export function interShared(db: Kysely<ReceivablesDatabase>, config: SharedConfig, windowMs = 60_000): InterShared {
  const calls = Object.fromEntries(INTER_ENDPOINTS.map((e) => [e, config.inter.callLimits[e]]));
  return bankShared(db, config, calls as Record<(typeof INTER_ENDPOINTS)[number], number>, windowMs);
}

/**
 * A PIX API's budgets: the limits its dialect publishes (pix/client.ts), and the bank account's one
 * token budget (INTER_CALL_LIMITS' token: an Inter account's PIX and Cobrança tokens come from one endpoint).
 */
export function pixShared(
  db: Kysely<ReceivablesDatabase>,
  config: SharedConfig,
  dialect: PixDialect,
  windowMs = 60_000,
): PixShared {
  return bankShared(db, config, pixDefaultLimits(dialect, config.inter.callLimits.token), windowMs);
}

/** One adapter per provider kind; each call names the account it is for. */
export function createPaymentProviders(
  config: Pick<ReceivablesConfig, 'provider' | 'inter' | 'credentialsEncryptionKey' | 'publicUrl'>,
  newestCredentials: NewestCredentials,
  db: Kysely<ReceivablesDatabase>,
  observer?: InterObserver,
): PaymentProviders & { close(): Promise<void> } {
  const credentials = new InterCredentialSource(config.credentialsEncryptionKey, newestCredentials);
  const ourWebhooks = interWebhookUrl(config.publicUrl, '');
  const ourPixWebhooks = pixWebhookUrl(config.publicUrl, '');
  const trustedCaPem = trustedInterCa(config.inter);
  const pixOptions = {
    credentials: (account: Parameters<InterCredentialSource['credentialsFor']>[0]) =>
      credentials.credentialsFor(account),
    timeoutMs: config.provider.timeoutMs,
    webhookUrl: (accountId: string) => pixWebhookUrl(config.publicUrl, accountId),
    // Any account version's URL on this service is ours: a newer version's may replace it.
    ownsWebhookUrl: (url: string) => url.startsWith(ourPixWebhooks),
    trustedCaPem,
    observer,
  };
  const inter = new InterProvider({
    credentials: (account) => credentials.credentialsFor(account),
    defaultBaseUrl: config.inter.baseUrl,
    timeoutMs: config.provider.timeoutMs,
    webhookUrl: (accountId) => interWebhookUrl(config.publicUrl, accountId),
    ownsWebhookUrl: (url) => url.startsWith(ourWebhooks),
    trustedCaPem,
    shared: interShared(db, config),
    observer,
    // Inter's PIX API: the same integration and base URL; its own token, beside the Cobrança one.
    pix: new PixProvider({
      ...pixOptions,
      dialect: PIX_DIALECTS.inter,
      shared: pixShared(db, config, PIX_DIALECTS.inter),
      defaultBaseUrl: config.inter.baseUrl,
      tokenKey: (bankAccount) => `${bankAccount}:pix`,
    }),
  });
  // Any other bank's PIX API: the account's base URL is its PIX API root, its token URL in its credentials.
  const pix = new PixProvider({
    ...pixOptions,
    dialect: PIX_DIALECTS.standard,
    shared: pixShared(db, config, PIX_DIALECTS.standard),
  });
  return {
    sandbox: new BankSandboxProvider(config.provider),
    inter,
    pix,
    close: async () => {
      await Promise.all([inter.close(), pix.close()]);
    },
  };
}
