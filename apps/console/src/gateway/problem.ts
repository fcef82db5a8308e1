import { isErrorCode } from '@payments/contracts';
import type { components } from '@payments/sdk';

/**
 * How the console calls the gateway, for both of its APIs (the public one of the tenant pages, the
 * admin one of the operator pages): one deadline, one fetch wrapper, one rule turning an answer's
 * body into a problem and one turning a gateway out of reach into an error the pages show.
 */

/** The gateway's problem+json document: its public and admin APIs answer this one shape. */
export type ProblemDocument = components['schemas']['Problem'];

/** A problem as a page shows it: a whole document, or the parts a page names (the error page's props). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  /** The fields a 400/422 names. */
  errors?: Array<{ in?: string; path?: string; message?: string }>;
}

/** Which of the gateway's APIs a call went to, as a problem's detail names it. */
export type GatewayApi = 'the gateway' | 'the admin API';

/** The default deadline of one call to the gateway (ConsoleConfig.gatewayTimeoutMs). */
export const GATEWAY_TIMEOUT_MS = 10_000;

/** The gateway refused a call: its status and problem document, shown to the user (escaped). */
export class GatewayError extends Error {
  // string, not the literal: subclasses name themselves.
  override readonly name: string = 'GatewayError';
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly problem: Problem,
    options?: ErrorOptions,
  ) {
    super(`${operation}: ${status} ${problem.title ?? ''}${problem.detail ? `: ${problem.detail}` : ''}`, options);
  }
}

/**
 * The gateway could not be reached or did not answer within the deadline: a 502 whose problem the
 * console makes. A GatewayError, so every page shows it as the problem page.
 */
export class GatewayUnreachableError extends GatewayError {
  override readonly name: string = 'GatewayUnreachableError';
  declare readonly problem: ProblemDocument;
  readonly timedOut: boolean;

  constructor(operation: string, cause: unknown, api: GatewayApi = 'the gateway') {
    const timedOut = isDeadline(cause);
    const detail = timedOut ? `${api} did not answer in time` : `${api} is out of reach`;
    super(operation, 502, madeProblem(502, 'Bad Gateway', detail), { cause });
    this.timedOut = timedOut;
  }
}

export interface GatewayFetchOptions {
  /** The deadline of one call, until the answer's headers (default GATEWAY_TIMEOUT_MS). */
  gatewayTimeoutMs?: number;
  /** Named in the problem when the call fails (default 'the gateway'). */
  api?: GatewayApi;
}

/** fetch with the deadline; a network failure or the deadline passing is a GatewayUnreachableError. */
export function gatewayFetch(options: GatewayFetchOptions = {}): (request: Request) => Promise<Response> {
  const timeoutMs = options.gatewayTimeoutMs ?? GATEWAY_TIMEOUT_MS;
  return async (request) => {
    try {
      return await fetch(request, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new GatewayUnreachableError(`${request.method} ${new URL(request.url).pathname}`, err, options.api);
    }
  };
}

/** What of an answer the problem takes besides its body. */
export type AnswerStatus = Pick<Response, 'status'> & Partial<Pick<Response, 'statusText'>>;

/**
 * A refused call's body as a problem document: the gateway's own when the body is one (its fields
 * checked, as they are shown on a page), else one made from the status (a proxy's HTML 502).
 */
export function asProblem(body: unknown, answer: AnswerStatus, api: GatewayApi = 'the gateway'): ProblemDocument {
  if (!isRecord(body) || (text(body.title) === undefined && text(body.detail) === undefined))
    return madeProblem(
      answer.status,
      answer.statusText || 'Error',
      `${api} answered ${answer.status} without a problem document`,
    );
  const title = text(body.title) ?? (answer.statusText || 'Error');
  const problem: ProblemDocument = {
    type: text(body.type) ?? 'about:blank',
    title,
    status: answer.status,
    detail: text(body.detail) ?? title,
    code: isErrorCode(body.code) ? body.code : codeOf(answer.status),
  };
  const instance = text(body.instance);
  const requestId = text(body.request_id);
  if (instance !== undefined) problem.instance = instance;
  if (requestId !== undefined) problem.request_id = requestId;
  if (Array.isArray(body.errors)) problem.errors = body.errors.filter(isRecord).map(fieldError);
  return problem;
}

type FieldError = NonNullable<ProblemDocument['errors']>[number];
const FIELD_PLACES: ReadonlyArray<FieldError['in']> = ['body', 'path', 'query', 'header'];

function fieldError(e: Record<string, unknown>): FieldError {
  const error: FieldError = { path: text(e.path) ?? '', message: text(e.message) ?? '' };
  const place = FIELD_PLACES.find((p) => p === e.in);
  if (place !== undefined) error.in = place;
  return error;
}

/** A problem the console makes itself (the gateway sent none), in the gateway's shape. */
function madeProblem(status: number, title: string, detail: string): ProblemDocument {
  return { type: 'about:blank', title, status, detail, code: codeOf(status) };
}

function codeOf(status: number): ProblemDocument['code'] {
  return status >= 500 ? 'service_unavailable' : 'internal_error';
}

/** Whether a fetch failed by its deadline (by name: an aborted fetch's DOMException is of another realm under jest). */
function isDeadline(err: unknown): boolean {
  const name = isRecord(err) ? err.name : undefined;
  return name === 'TimeoutError' || name === 'AbortError';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
