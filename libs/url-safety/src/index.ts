export {
  assertPublicAddress,
  callbackUrlRefusal,
  checkCallbackUrl,
  classifyAddress,
  isPublicAddress,
  literalHostRefusal,
  UnsafeUrlError,
  type UrlPolicy,
} from './url-safety';
export { createGuardedLookup } from './guarded-lookup';
export { urlForLog } from './url-for-log';
