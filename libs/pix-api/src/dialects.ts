// A dialect is what one bank's PIX API varies from the standard: where it lives, how its token is had,
// which headers it wants and which fields it shapes differently. The adapter follows the standard and asks
// its dialect only for these differences. docs/providers/pix.md lists each with its source.

/** The scopes a PIX account's integration asks for: create and read cobvs, read received PIX, the webhook. */
export const PIX_SCOPES = 'cobv.write cobv.read pix.read webhook.read webhook.write';

export type PixDialectName = 'standard' | 'inter';

/** One known difference from the standard, with where it is documented. */
export interface DialectDifference {
  topic: string;
  standard: string;
  dialect: string;
  source: string;
}

export interface PixDialect {
  name: PixDialectName;
  /** The PIX API root (paths of PIX_PATHS are appended to it) for an account's base URL. */
  apiRoot(accountBaseUrl: string): string;
  /** Where the OAuth2 client-credentials token is asked for. */
  tokenUrl(accountBaseUrl: string, credentialsTokenUrl?: string): string;
  scopes: string;
  /** Extra headers every request of this account carries. */
  headers(checkingAccount: string | null): Record<string, string>;
  /** Requests a minute each endpoint takes, when the bank publishes it (null: not published). */
  requestsPerMinute: number | null;
  differences: readonly DialectDifference[];
}

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

const standard: PixDialect = {
  name: 'standard',
  apiRoot: (accountBaseUrl) => trimSlash(accountBaseUrl),
  tokenUrl: (_accountBaseUrl, credentialsTokenUrl) => {
    if (!credentialsTokenUrl) throw new TypeError('a standard PIX account needs its token_url');
    return credentialsTokenUrl;
  },
  scopes: PIX_SCOPES,
  headers: () => ({}),
  requestsPerMinute: null,
  differences: [],
};

const inter: PixDialect = {
  name: 'inter',
  apiRoot: (accountBaseUrl) => `${trimSlash(accountBaseUrl)}/pix/v2`,
  tokenUrl: (accountBaseUrl) => `${trimSlash(accountBaseUrl)}/oauth/v2/token`,
  scopes: PIX_SCOPES,
  headers: (checkingAccount): Record<string, string> =>
    checkingAccount ? { 'x-conta-corrente': checkingAccount } : {},
  requestsPerMinute: null,
  differences: [],
};

export const PIX_DIALECTS: Record<PixDialectName, PixDialect> = { standard, inter };

/** The dialect of an account provider kind: Inter's accounts speak Inter's, any other the standard. */
export function dialectOf(name: string): PixDialect {
  return name === 'inter' ? inter : standard;
}
