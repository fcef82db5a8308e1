export { problemResponse, writeResponse, SERVICE_UNAVAILABLE_RETRY_AFTER_S, type HttpResponse } from './problem';
export {
  bytesInWords,
  payloadTooLarge,
  problemErrors,
  toServiceError,
  type ProblemErrorsOptions,
  type ProblemWording,
} from './error-handler';
