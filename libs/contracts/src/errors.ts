/**
 * Error codes: the one list shared by services (which raise them), the bus (which carries them) and the
 * gateway (which turns them into problem+json). Each code fixes its HTTP status and title.
 */
export const ErrorCatalog = {
  malformed_json: { status: 400, title: 'Malformed JSON' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key header required' },
  idempotency_key_invalid: { status: 400, title: 'Invalid Idempotency-Key header' },
  unauthorized: { status: 401, title: 'UNAUTHORIZED' },
  /** A JWT of ours, well signed, past its exp: authenticate again. Titled as the spec titles its 401. */
  token_expired: { status: 401, title: 'UNAUTHORIZED' },
  /** Console sign-in: the same answer for an unknown e-mail, a wrong password and a wrong TOTP code. */
  sign_in_refused: { status: 401, title: 'Sign-in refused' },
  /** A console session that is unknown, signed out, past a limit, or whose user, token or tenant was revoked. */
  session_ended: { status: 401, title: 'Session ended' },
  forbidden: { status: 403, title: 'Forbidden' },
  /** A development-only console sign-in (integration token, operator credential) asked of a production gateway. */
  sign_in_method_disabled: { status: 403, title: 'Sign-in method disabled' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  request_timeout: { status: 408, title: 'Request Timeout' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_request_in_progress: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  /** Admin API: a rotation while the previous signing secret is still accepted, without confirm_overlap. */
  rotation_overlap_running: { status: 409, title: 'The previous signing secret is still accepted' },
  gone: { status: 410, title: 'Gone' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  no_provider_account: { status: 422, title: 'No provider account' },
  pix_key_required: { status: 422, title: 'The bank account has no PIX key' },
  slip_not_supported: { status: 422, title: 'The bank account takes PIX charges only' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused with a different request' },
  redrive_refused: { status: 422, title: 'Dead letter not re-driven' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal_error: { status: 500, title: 'Internal Server Error' },
  service_unavailable: { status: 503, title: 'Service Unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ErrorCatalog;

export interface FieldError {
  /** JSON pointer into the request body (e.g. `/3/value`), or the name of a path parameter. */
  path: string;
  message: string;
  /** Where the field is: the body (default), the URL path, the query string or a header. */
  in?: 'body' | 'path' | 'query' | 'header';
}

/** A failure with a code from the catalog; crosses process boundaries as `{ code, detail, errors }`. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  /**
   * True when the work asked for may have been done all the same: a request that reached a service
   * whose reply never came. Whoever must not run the same work twice beside it (an idempotency key)
   * keeps its claim instead of releasing it. False for every refusal, which did nothing.
   */
  readonly outcomeUnknown: boolean = false;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(`${code}: ${detail}`);
  }

  get status(): number {
    return ErrorCatalog[this.code].status;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ErrorCatalog, value);
}
