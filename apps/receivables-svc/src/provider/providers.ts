import type { PaymentProviders } from '../domain/ports';
import type { ReceivablesConfig } from '../config';
import { BankSandboxProvider } from './bank-sandbox-provider';
import { InterCredentialSource, type NewestCredentials } from './credentials';
import { InterProvider } from './inter';

/** Path of an Inter account's payment webhook on this service (Inter is told the full URL per account). */
export const INTER_WEBHOOK_PATH = '/provider/webhooks/inter';

export function interWebhookUrl(publicUrl: string, accountId: string): string {
  return `${publicUrl}${INTER_WEBHOOK_PATH}/${accountId}`;
}

/** One adapter per provider kind; each call names the account it is for. */
export function createPaymentProviders(
  config: Pick<ReceivablesConfig, 'provider' | 'inter' | 'credentialsEncryptionKey' | 'publicUrl'>,
  newestCredentials: NewestCredentials,
): PaymentProviders & { close(): Promise<void> } {
  const credentials = new InterCredentialSource(config.credentialsEncryptionKey, newestCredentials);
  const inter = new InterProvider({
    credentials: (account) => credentials.credentialsFor(account),
    defaultBaseUrl: config.inter.baseUrl,
    timeoutMs: config.provider.timeoutMs,
    webhookUrl: (accountId) => interWebhookUrl(config.publicUrl, accountId),
    trustedCaPem: config.inter.trustedCaPem,
  });
  return { sandbox: new BankSandboxProvider(config.provider), inter, close: () => inter.close() };
}
