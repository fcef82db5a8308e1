export { InterProvider, type InterProviderOptions } from './inter-provider';
export { INTER_DUPLICATE_WINDOW_MS } from './registration';
export { parseInterWebhook, InvalidInterWebhookError, type InterNotice } from './webhook';
/** seuNumero of one of our charges (for operators matching Inter's statement to our ids). */
export { seuNumeroFor } from '@payments/inter-cobranca';
