import type { TSchema } from '@sinclair/typebox';
import { CHECKING_ACCOUNT_HEADER, INTER_COBRANCA_SCOPE, INTER_PATHS, interViolations } from '@payments/inter-cobranca';
import type { InterCredentials } from '@payments/contracts';
import { BankAccountClient, checkingAccountHeader, type BankCall } from '../bank-client';
import { BankHttpError, BankNetworkError, BankUnexpectedAnswerError, describeError } from '../bank-errors';
import type { BankObserver, BankShared } from '../bank-shared';

/**
 * Inter's Cobrança API (boleto with PIX) over the shared bank client (../bank-client.ts): its token at
 * `${baseUrl}/oauth/v2/token` with the Cobrança scopes, under the bank account's own token key, and
 * the budgets of Inter's published per-minute limits.
 */

/** Inter answered with a status we do not treat as success (after one token refresh on 401). */
export const InterHttpError = BankHttpError;
export type InterHttpError = BankHttpError;
/** The request did not get an answer (refused connection or TLS handshake, reset, timeout). */
export const InterNetworkError = BankNetworkError;
export type InterNetworkError = BankNetworkError;
/** Inter answered 2xx with a body that is not what its contract says. */
export const InterUnexpectedAnswerError = BankUnexpectedAnswerError;
export type InterUnexpectedAnswerError = BankUnexpectedAnswerError;

export { checkingAccountHeader, describeError };

/**
 * Inter's endpoints as its reference limits them (each its own per-minute budget; the webhook's GET,
 * PUT and DELETE share one, the most careful reading of "5 calls a minute" each).
 */
export const INTER_ENDPOINTS = [
  'token',
  'create',
  'consult',
  'list',
  'cancel',
  'pdf',
  'webhook',
  'callbacks',
  'callbacks-retry',
] as const;
export type InterEndpoint = (typeof INTER_ENDPOINTS)[number];

/**
 * Calls a minute in production, from Inter's API reference (developers.inter.co/references/cobranca-bolepix);
 * the token endpoint's 5 is what integrators observe (not published).
 */
export const INTER_DEFAULT_LIMITS: Record<InterEndpoint, number> = {
  token: 5,
  create: 120,
  consult: 120,
  list: 120,
  cancel: 120,
  pdf: 120,
  webhook: 5,
  callbacks: 10,
  'callbacks-retry': 5,
};

export type InterCall = BankCall<InterEndpoint>;
export type InterShared = BankShared<InterEndpoint>;
export type InterObserver = BankObserver;
export type InterCallBudget = InterShared['budget'];
export type InterTokenStore = InterShared['tokens'];

export interface InterClientOptions {
  baseUrl: string;
  credentials: InterCredentials;
  /** Deadline of one HTTP exchange (connect to the end of the answer). */
  timeoutMs: number;
  /** A CA to trust besides the public ones, read when the first call is made (the sandbox may create it later). */
  trustedCa?: () => string | undefined;
  /** The bank account (tenant and account key): the key of its shared budgets and token. */
  bankAccount: string;
  /** The account version's id, for operators (logs, metrics). */
  accountId: string;
  /** x-conta-corrente: the checking account the calls are for (digits, no leading zeros), when the account names one. */
  checkingAccount?: string | null;
  shared?: InterShared;
  observer?: InterObserver;
}

/** One Inter bank account's connection to the Cobrança API (see BankAccountClient). */
export class InterAccountClient extends BankAccountClient<InterEndpoint> {
  constructor(options: InterClientOptions) {
    const { baseUrl, checkingAccount, ...rest } = options;
    super({
      ...rest,
      bank: 'inter',
      apiRoot: baseUrl,
      token: { url: `${baseUrl}${INTER_PATHS.token}`, scope: INTER_COBRANCA_SCOPE },
      headers: checkingAccount ? { [CHECKING_ACCOUNT_HEADER]: checkingAccount } : {},
      endpointOf,
    });
  }

  get baseUrl(): string {
    return this.apiRoot;
  }

  /** Calls and checks the 2xx body against `schema` (an InterUnexpectedAnswerError when it does not conform). */
  async callFor<T>(call: InterCall, schema: TSchema): Promise<T> {
    const { body } = await this.call(call);
    const violations = interViolations(schema, body);
    if (violations.length > 0)
      throw new InterUnexpectedAnswerError(
        `inter ${call.what}: unexpected answer (${violations.map((v) => `${v.path || '/'} ${v.message}`).join('; ')})`,
      );
    return body as T;
  }
}

/** Which budget a call spends, from its method and path. */
export function endpointOf(call: Pick<InterCall, 'method' | 'path'>): InterEndpoint {
  const path = call.path.replace(/\/+$/, '');
  if (path === INTER_PATHS.token) return 'token';
  if (path.endsWith('/webhook/callbacks/retry')) return 'callbacks-retry';
  if (path.endsWith('/webhook/callbacks')) return 'callbacks';
  if (path.endsWith('/webhook')) return 'webhook';
  if (path === INTER_PATHS.charges) return call.method === 'POST' ? 'create' : 'list';
  if (path.endsWith('/cancelar')) return 'cancel';
  if (path.endsWith('/pdf')) return 'pdf';
  return 'consult';
}
