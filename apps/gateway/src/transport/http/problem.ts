import type { FieldError } from '@payments/contracts';
import { ServiceError } from '@payments/contracts';

// The problem writer is shared with receivables-svc's webhook port (libs/http-problem).
export { problemResponse, SERVICE_UNAVAILABLE_RETRY_AFTER_S, type HttpResponse } from '@payments/http-problem';

export function validationError(
  errors: FieldError[],
  detail = 'the request has invalid fields; see errors',
): ServiceError {
  return new ServiceError('validation_failed', detail, errors);
}
