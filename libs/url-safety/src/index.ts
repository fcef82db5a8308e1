export { assertPublicAddress, classifyAddress, checkCallbackUrl, UnsafeUrlError, type UrlPolicy } from './url-safety';
export { createGuardedLookup } from './guarded-lookup';
