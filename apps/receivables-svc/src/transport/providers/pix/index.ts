export { PixAccountClient, PIX_ENDPOINTS, pixDefaultLimits, pixEndpointOf, type PixEndpoint } from './client';
export { chargeState, isPixChargeId, registrationOutcome, termsOf } from './mapping';
export { PixProvider, PIX_NOT_SHOWN_YET_MS, type PixProviderOptions } from './pix-provider';
