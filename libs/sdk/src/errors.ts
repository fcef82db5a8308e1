/** The problem document (RFC 9457) the gateway answers with on every error. */
export interface ProblemBody {
  title?: string;
  detail?: string;
  status?: number;
  code?: string;
  request_id?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** A call that did not succeed: the HTTP status and the problem the gateway sent, if any. */
export class PaymentsApiError extends Error {
  override readonly name = 'PaymentsApiError';

  constructor(
    readonly operation: string,
    readonly status: number,
    readonly problem: ProblemBody | undefined,
  ) {
    super(`${operation} answered ${status}: ${describe(problem)}`);
  }
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
