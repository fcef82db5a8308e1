import { ProviderUnavailableError } from '../../domain/ports';

/** How a call to a bank's API fails, whichever API it is (Inter's Cobrança, a PIX API). */

/** The bank answered with a status we do not treat as success (after one token refresh on 401). */
export class BankHttpError extends ProviderUnavailableError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
    bank = 'inter',
  ) {
    super(`${bank} ${what}: HTTP ${status}${describeError(body)}`);
  }

  /** Statuses that refuse the request itself: for a create, the charge is looked up before it is rejected. */
  get isRefusal(): boolean {
    return this.status === 400 || this.status === 404 || this.status === 422;
  }
}

/** The request did not get an answer (refused connection or TLS handshake, reset, timeout). */
export class BankNetworkError extends ProviderUnavailableError {}

/** The bank answered 2xx with a body that is not what its contract says. */
export class BankUnexpectedAnswerError extends ProviderUnavailableError {}

/**
 * A bank's error body in one line: title, detail and the fields it names (Inter's and the PIX
 * standard's problem shapes share `title`, `detail` and `violacoes: [{ propriedade, razao }]`).
 */
export function describeError(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const { title, detail, violacoes } = body as { title?: unknown; detail?: unknown; violacoes?: unknown };
  const fields = Array.isArray(violacoes)
    ? violacoes
        .map((v: { propriedade?: unknown; razao?: unknown }) => `${String(v.propriedade)}: ${String(v.razao)}`)
        .join('; ')
    : '';
  return [title, detail, fields]
    .filter((part): part is string => typeof part === 'string' && part !== '')
    .map((part) => ` ${part}`)
    .join(' -');
}
