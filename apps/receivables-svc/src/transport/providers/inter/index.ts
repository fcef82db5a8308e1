export { InterProvider, INTER_DUPLICATE_WINDOW_MS, type InterProviderOptions } from './inter-provider';
export { parseInterWebhook, InvalidInterWebhookError, type InterNotice } from './webhook';
/** seuNumero of one of our charges (for operators matching Inter's statement to our ids). */
export { seuNumeroFor } from '@payments/inter-cobranca';
