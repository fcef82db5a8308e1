import { PIX_DIALECTS, type PixDialect, type RequestsPerMinute } from '@payments/pix-api';
import type { InterCredentials } from '@payments/contracts';
import { BankAccountClient, type BankCall, type BankClientOptions } from '../bank-client';
import type { BankObserver, BankShared } from '../bank-shared';

/**
 * A bank account's connection to a PIX API (the standard's or a bank's dialect of it) over the shared
 * bank client (../bank-client.ts): OAuth2 client credentials over mutual TLS at the dialect's token
 * URL with the PIX scopes, and a per-minute budget per endpoint shared by every instance.
 */

/** The PIX API's endpoints, each its own per-minute budget (the token's is the bank account's one token budget). */
export const PIX_ENDPOINTS = [
  'token',
  'cobv-create',
  'cobv-consult',
  'cobv-cancel',
  'cobv-list',
  'pix-list',
  'pix-consult',
  'pix-refund',
  'pix-webhook',
] as const;
export type PixEndpoint = (typeof PIX_ENDPOINTS)[number];

/**
 * Calls a minute per endpoint for a dialect: the limits the bank publishes (Inter's, in its dialect:
 * cobv, received PIX and devoluções, webhook), or Inter's when a bank publishes none (the standard's
 * dialect: a 429 is waited out all the same). The token endpoint's 5 is the one observed at Inter (not
 * published); it is the bank account's one token budget, whichever API asks.
 */
export function pixDefaultLimits(dialect: PixDialect, tokenCalls = 5): Record<PixEndpoint, number> {
  const published = dialect.requestsPerMinute ?? PIX_DIALECTS.inter.requestsPerMinute ?? FALLBACK;
  return {
    token: tokenCalls,
    'cobv-create': published.cobv,
    'cobv-consult': published.cobv,
    'cobv-cancel': published.cobv,
    'cobv-list': published.cobv,
    'pix-list': published.pix,
    'pix-consult': published.pix,
    'pix-refund': published.pix,
    'pix-webhook': published.webhook,
  };
}

/** Only if no dialect published any: the most careful reading of the usual bank limits. */
const FALLBACK: RequestsPerMinute = { cobv: 120, pix: 120, webhook: 5 };

export type PixCall = BankCall<PixEndpoint>;
export type PixShared = BankShared<PixEndpoint>;

export interface PixClientOptions {
  dialect: PixDialect;
  /** The root the account's PIX API is under, before the dialect's (Inter: its base URL; standard: the API root). */
  accountBaseUrl: string;
  credentials: InterCredentials & { token_url?: string };
  timeoutMs: number;
  trustedCa?: () => string | undefined;
  /** The bank account: the key of its shared budgets, the token endpoint's included. */
  bankAccount: string;
  /** The key of the shared token (Inter: the PIX token is not its Cobrança token). */
  tokenKey: string;
  accountId: string;
  /** x-conta-corrente's value (digits), when the account names its checking account. */
  checkingAccount: string | null;
  shared?: PixShared;
  observer?: BankObserver;
}

export class PixAccountClient extends BankAccountClient<PixEndpoint> {
  constructor(readonly options: PixClientOptions) {
    super(bankOptionsOf(options));
  }

  get dialect(): PixDialect {
    return this.options.dialect;
  }

  /** GET and the 2xx body: what reconciliation's sweep reads lists with (sweep.ts PixApiReader). */
  async get(path: string, query: Record<string, string>, what: string): Promise<unknown> {
    return (await this.call({ method: 'GET', path, query, what })).body;
  }
}

function bankOptionsOf(options: PixClientOptions): BankClientOptions<PixEndpoint> {
  const { dialect, accountBaseUrl, credentials, checkingAccount, ...rest } = options;
  return {
    ...rest,
    credentials,
    bank: `pix (${dialect.name})`,
    apiRoot: dialect.apiRoot(accountBaseUrl),
    token: { url: dialect.tokenUrl(accountBaseUrl, credentials.token_url), scope: dialect.scopes },
    headers: dialect.headers(checkingAccount),
    endpointOf: pixEndpointOf,
  };
}

/** Which budget a PIX API call spends, from its method and path (relative to the API root). */
export function pixEndpointOf(call: Pick<PixCall, 'method' | 'path'>): PixEndpoint {
  const path = call.path.replace(/\/+$/, '').split('?')[0] ?? '';
  if (path.startsWith('/webhook/')) return 'pix-webhook';
  if (path === '/cobv') return 'cobv-list';
  if (path.startsWith('/cobv/')) {
    if (call.method === 'PUT') return 'cobv-create';
    return call.method === 'PATCH' ? 'cobv-cancel' : 'cobv-consult';
  }
  if (path === '/pix') return 'pix-list';
  if (path.includes('/devolucao/')) return 'pix-refund';
  return 'pix-consult';
}
