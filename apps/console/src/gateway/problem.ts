/** A gateway's application/problem+json answer, as far as the console shows it. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  /** The fields a 400/422 names. */
  errors?: Array<{ in?: string; path?: string; message?: string }>;
}

/** The gateway refused a call: its status and problem document, shown to the user (escaped). */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${operation}: ${status} ${problem.title ?? ''}${problem.detail ? `: ${problem.detail}` : ''}`);
  }
}

/** The gateway could not be reached or did not answer in time. */
export class GatewayUnreachableError extends Error {
  override readonly name = 'GatewayUnreachableError';
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(`${operation}: the gateway did not answer (${cause instanceof Error ? cause.message : String(cause)})`, {
      cause,
    });
  }
}

/** Whatever a failed call's body was, as a Problem (a proxy's HTML error page gives an empty one). */
export function asProblem(body: unknown, status: number): Problem {
  if (typeof body !== 'object' || body === null) return { status };
  const b = body as Record<string, unknown>;
  const text = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const errors = Array.isArray(b.errors)
    ? b.errors
        .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null)
        .map((e) => ({ in: text(e.in), path: text(e.path), message: text(e.message) }))
    : undefined;
  return { type: text(b.type), title: text(b.title), status, detail: text(b.detail), errors };
}

/** How long one call to the gateway may take before the page says it did not answer. */
export const GATEWAY_TIMEOUT_MS = 10_000;

/** fetch with a deadline, and network failures said as GatewayUnreachableError. */
export function gatewayFetch(
  operationOf: (request: Request) => string = (r) => `${r.method} ${new URL(r.url).pathname}`,
) {
  return async (input: Request): Promise<Response> => {
    try {
      return await fetch(input, { signal: AbortSignal.timeout(GATEWAY_TIMEOUT_MS) });
    } catch (err) {
      throw new GatewayUnreachableError(operationOf(input), err);
    }
  };
}
