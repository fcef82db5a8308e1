export { startBankSandbox, type RunningBankSandbox } from './server';
export { loadBankSandboxConfig, type BankSandboxConfig } from './config';
export {
  signSandboxWebhook,
  verifySandboxWebhook,
  SIGNATURE_HEADER,
  EVENT_ID_HEADER,
} from './domain/webhook-signature';
export type { ChargePaidEvent } from './domain/webhook-event';
export type { ChargeResponse } from './http/wire';
export type { ChargeRequest } from './http/charge-request';
export type { ErrorBody, BankErrorCode } from './http/errors';
