export { startBankSandbox, type RunningBankSandbox } from './server';
export { loadBankSandboxConfig, type BankSandboxConfig } from './config';
export {
  signSandboxWebhook,
  webhookSigner,
  WEBHOOK_ID_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
} from './domain/webhook-signature';
export type { ChargePaidEvent } from './domain/webhook-event';
export type { ChargeResponse } from './transport/http/wire';
export type { ChargeRequest } from './transport/http/charge-request';
export type { ErrorBody, BankErrorCode } from './transport/http/errors';
