export { PaymentsClient, ok, type PaymentsApi, type PaymentsClientOptions, type SdkPaths } from './client';
export type { CallbackEventSummary, SearchRequest, SearchResultItem } from './client';
export { PaymentsApiError, PaymentsRequestError, REQUEST_ID_HEADER, type ProblemBody } from './errors';
export { retryingFetch, retryAfterMs, type FetchFunction, type RetryOptions, type TransportOptions } from './retry';
export { TokenManager, jwtClaims, type AccessToken, type TokenOptions } from './tokens';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders, type VerifyOptions } from './webhooks';
export type { components, operations, paths, webhooks } from './generated/openapi';
