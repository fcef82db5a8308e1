import type { InterCredentials } from '@payments/contracts';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type CancellationOutcome,
  type ChargeRequest,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderChargeState,
  type ProviderPayment,
} from '../../domain/ports';

/** What the Inter adapter needs; one instance serves every `inter` account. */
export interface InterProviderOptions {
  /** Opens an account's sealed credentials (the only place they are decrypted). */
  openCredentials(account: ProviderAccount): InterCredentials;
  /** API root when the account sets none (INTER_BASE_URL). */
  defaultBaseUrl: string;
  timeoutMs: number;
  /** Where Inter is told to send an account's payment webhooks. */
  webhookUrl(accountId: string): string;
}

/** Banco Inter Cobrança v3 (boleto with PIX). Work in progress: filled in by the Inter adapter change. */
export class InterProvider implements PaymentProvider {
  constructor(private readonly options: InterProviderOptions) {}

  registerMany(_account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    return Promise.resolve(
      requests.map(() => ({ kind: 'unavailable' as const, reason: 'inter adapter not built yet' })),
    );
  }

  cancel(_account: ProviderAccount, _chargeId: string, _reason: string): Promise<CancellationOutcome> {
    return Promise.reject(new ProviderUnavailableError('inter adapter not built yet'));
  }

  consult(_account: ProviderAccount, _chargeId: string): Promise<ProviderChargeState> {
    return Promise.reject(new ProviderUnavailableError('inter adapter not built yet'));
  }

  slipPdf(_account: ProviderAccount, _chargeId: string): Promise<Buffer> {
    return Promise.reject(new ProviderUnavailableError('inter adapter not built yet'));
  }
}

/** A payment notice from Inter's webhook, before it is confirmed by consulting the charge. */
export type InterNotice = Pick<ProviderPayment, 'chargeId'> & { situation: string };

/** Parses the body Inter posts to the webhook URL (a JSON array of charge updates). Filled in by the adapter change. */
export function parseInterWebhook(_rawBody: string): InterNotice[] {
  throw new Error('inter webhook parsing not built yet');
}
