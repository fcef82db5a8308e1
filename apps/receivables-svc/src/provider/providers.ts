import type { Kysely } from 'kysely';
import type { PaymentProviders } from '../domain/ports';
import { trustedInterCa, type ReceivablesConfig } from '../config';
import { PostgresBankTokens } from '../db/bank-tokens';
import { PostgresCallBudget } from '../db/call-budget';
import type { ReceivablesDatabase } from '../db/schema';
import { BankSandboxProvider } from './bank-sandbox-provider';
import { InterCredentialSource, type NewestCredentials } from './credentials';
import { InterProvider } from './inter';
import { INTER_ENDPOINTS, type InterObserver, type InterShared } from './inter/client';

/** Path of an Inter account's payment webhook on this service (Inter is told the full URL per account). */
export const INTER_WEBHOOK_PATH = '/provider/webhooks/inter';

export function interWebhookUrl(publicUrl: string, accountId: string): string {
  return `${publicUrl}${INTER_WEBHOOK_PATH}/${accountId}`;
}

/** The budgets and token every instance shares through this database, with the configured limits a minute. */
export function interShared(
  db: Kysely<ReceivablesDatabase>,
  config: Pick<ReceivablesConfig, 'inter' | 'credentialsEncryptionKey'>,
  windowMs = 60_000,
): InterShared {
  const limits = Object.fromEntries(
    INTER_ENDPOINTS.map((endpoint) => [endpoint, { calls: config.inter.callLimits[endpoint], windowMs }]),
  ) as InterShared['limits'];
  return {
    budget: new PostgresCallBudget(db, config.inter.callWaitMaxMs),
    // The refresh lease outlasts the token budget's wait and the request itself.
    tokens: new PostgresBankTokens(db, config.credentialsEncryptionKey, config.inter.callWaitMaxMs + 30_000),
    limits,
  };
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
  const inter = new InterProvider({
    credentials: (account) => credentials.credentialsFor(account),
    defaultBaseUrl: config.inter.baseUrl,
    timeoutMs: config.provider.timeoutMs,
    webhookUrl: (accountId) => interWebhookUrl(config.publicUrl, accountId),
    // Any account version's URL on this service is ours: a newer version's may replace it.
    ownsWebhookUrl: (url) => url.startsWith(ourWebhooks),
    trustedCaPem: trustedInterCa(config.inter),
    shared: interShared(db, config),
    observer,
  });
  return { sandbox: new BankSandboxProvider(config.provider), inter, close: () => inter.close() };
}
