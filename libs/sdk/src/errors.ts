/** The problem document (RFC 9457) the gateway answers with on every error. */
export interface ProblemBody {
  title?: string;
  detail?: string;
  status?: number;
  code?: string;
  request_id?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** The header the gateway names every request with, in its answers and its logs (docs/api.md). */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A call the gateway answered with an error: the HTTP status, the problem it sent, if any, and the
 * request id to quote to support (the X-Request-Id of the answer, else the problem's request_id).
 */
export class PaymentsApiError extends Error {
  override readonly name = 'PaymentsApiError';
  readonly requestId: string | undefined;

  constructor(
    readonly operation: string,
    readonly status: number,
    readonly problem: ProblemBody | undefined,
    requestId?: string | null,
  ) {
    const id = requestId || problem?.request_id || undefined;
    super(`${operation} answered ${status}: ${describe(problem)}${id ? ` (request id ${id})` : ''}`);
    this.requestId = id;
  }

  /** The error of an answer, its request id taken from the answer's header. */
  static of(operation: string, response: Response, error: unknown): PaymentsApiError {
    return new PaymentsApiError(operation, response.status, asProblem(error), response.headers.get(REQUEST_ID_HEADER));
  }
}

/**
 * A call that got no answer: every attempt failed on the network or timed out, or the caller's
 * signal aborted it. `cause` is the last failure as fetch reported it.
 */
export class PaymentsRequestError extends Error {
  override readonly name = 'PaymentsRequestError';

  constructor(
    readonly operation: string,
    readonly attempts: number,
    /** The last attempt ran out of the client's timeoutMs. */
    readonly timedOut: boolean,
    /** The caller's signal ended the call (its own timeout, or an abort). */
    readonly aborted: boolean,
    options: { cause: unknown },
  ) {
    super(
      `${operation} got no answer after ${attempts} attempt(s): ${reasonOf(timedOut, aborted, options.cause)}`,
      options,
    );
  }
}

function reasonOf(timedOut: boolean, aborted: boolean, cause: unknown): string {
  if (aborted) return 'aborted by the caller';
  if (timedOut) return 'timed out';
  return cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
}

function describe(problem: ProblemBody | undefined): string {
  if (!problem) return 'no problem document';
  const fields = problem.errors?.map((e) => `${e.path} ${e.message}`).join('; ');
  return [problem.code ?? problem.title, problem.detail, fields].filter(Boolean).join(': ');
}

/** Narrows an openapi-fetch `error` value to a problem document. */
export function asProblem(value: unknown): ProblemBody | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ProblemBody) : undefined;
}
