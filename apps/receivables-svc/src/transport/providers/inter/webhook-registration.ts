import { INTER_PATHS, WebhookView, type WebhookView as WebhookViewType } from '@payments/inter-cobranca';
import type { ProviderAccount } from '../../../domain/ports';
import { ensureWebhook } from '../webhook-setup';
import { InterHttpError } from './client';
import type { InterProviderOptions } from './inter-provider';
import type { AccountState } from './registration';

/** A webhook setup that failed is tried again after this long (the webhook endpoints allow 5 calls a minute). */
const WEBHOOK_RETRY_MS = 60_000;

/** What the webhook setup reads of the adapter's options. */
export type InterWebhookOptions = Pick<InterProviderOptions, 'webhookUrl' | 'ownsWebhookUrl' | 'observer'>;

/**
 * Points the account's Cobrança webhook at us, once per bank account (webhook-setup.ts): the webhook
 * Inter has is read first; none, or one of ours, is set to ours; another URL stays unless the account
 * says replace (--replace-webhook).
 */
export async function ensureInterWebhook(
  options: InterWebhookOptions,
  account: ProviderAccount,
  state: AccountState,
  replace: boolean,
): Promise<void> {
  const ours = options.webhookUrl(account.id);
  await ensureWebhook(
    state.webhook,
    {
      read: async () => {
        try {
          const view = await state.client.callFor<WebhookViewType>(
            { method: 'GET', path: INTER_PATHS.webhook, what: 'webhook read', endpoint: 'webhook' },
            WebhookView,
          );
          return view.webhookUrl;
        } catch (err) {
          if (err instanceof InterHttpError && err.status === 404) return null; // none set
          throw err;
        }
      },
      write: async (url) => {
        await state.client.call({
          method: 'PUT',
          path: INTER_PATHS.webhook,
          json: { webhookUrl: url },
          what: 'webhook registration',
          endpoint: 'webhook',
        });
      },
    },
    {
      ours,
      replace,
      owns: (url) => options.ownsWebhookUrl?.(url) ?? false,
      onConflict: (registered) => options.observer?.webhookConflict?.(account.id, registered, ours),
      retryMs: WEBHOOK_RETRY_MS,
    },
  );
}
