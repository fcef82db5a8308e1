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
  /** What we do about it. */
  handling: string;
  source: string;
}

/** Requests a minute a bank takes, per group of endpoints, as it publishes them (production). */
export interface RequestsPerMinute {
  cobv: number;
  pix: number;
  webhook: number;
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
  /** The PIX key as the path of PUT/GET/DELETE /webhook/{chave} takes it. */
  webhookKey(chave: string): string;
  /** The name of the txid filter of GET /pix. */
  receivedTxidParam: string;
  /** Published limits; null when the bank publishes none. */
  requestsPerMinute: RequestsPerMinute | null;
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
  webhookKey: (chave) => chave,
  receivedTxidParam: 'txid',
  requestsPerMinute: null,
  differences: [],
};

const INTER_REFERENCE = 'Inter, "API Pix", developers.inter.co/references/pix';

// Inter's differences, each read in its reference (the servers, each operation's description, parameters
// and schemas). Where Inter's reference and the standard disagree and both would be accepted, we send the
// standard's shape.
const INTER_DIFFERENCES: readonly DialectDifference[] = [
  {
    topic: 'API root',
    standard: 'the PSP publishes its base URL; paths start at /cob, /cobv, /pix, /webhook',
    dialect: 'under /pix/v2 of the Inter base URL (https://cdpj.partners.bancointer.com.br/pix/v2)',
    handling: 'apiRoot = account base URL + /pix/v2',
    source: `${INTER_REFERENCE}, servers`,
  },
  {
    topic: 'token',
    standard: 'OAuth2 client credentials at the PSP token URL',
    dialect: 'the same integration and token as its other APIs: POST /oauth/v2/token over mutual TLS',
    handling: 'tokenUrl = account base URL + /oauth/v2/token',
    source: `${INTER_REFERENCE}, "Escopo requerido" of each operation; developers.inter.co/references/token`,
  },
  {
    topic: 'scopes',
    standard: 'cobv.write, cobv.read, pix.read, webhook.read, webhook.write',
    dialect: 'the same names',
    handling: 'PIX_SCOPES for both',
    source: `${INTER_REFERENCE}, "Escopo requerido" of each operation`,
  },
  {
    topic: 'x-conta-corrente header',
    standard: 'none',
    dialect:
      'x-conta-corrente names the checking account, digits only with the check digit and no leading zeros; needed when the integration has more than one account; Inter also sends it on its notices',
    handling: 'sent when the account names a checking account, reduced to digits without leading zeros',
    source: `${INTER_REFERENCE}, parameter xContaCorrente; callback listaPix`,
  },
  {
    topic: 'rate limits',
    standard: 'none published',
    dialect: 'cobv and pix: 120 a minute (sandbox 10); webhook: 10 a minute',
    handling: 'requestsPerMinute; the caller paces its requests',
    source: `${INTER_REFERENCE}, "rate limit" of each operation`,
  },
  {
    topic: 'PUT /webhook/{chave} answer',
    standard: '200',
    dialect: '204 with no body',
    handling: 'any 2xx is success',
    source: `${INTER_REFERENCE}, PUT /webhook/{chave} responses`,
  },
  {
    topic: 'webhook key of a phone',
    standard: 'the key as the DICT formats it (+5511999999999)',
    dialect: 'without the "+" (5511999999999)',
    handling: 'webhookKey drops a leading "+"',
    source: `${INTER_REFERENCE}, PUT /webhook/{chave}, parameter chave`,
  },
  {
    topic: 'webhook URL',
    standard: 'any URI',
    dialect: 'must start with https://',
    handling: 'our webhook URL is https',
    source: `${INTER_REFERENCE}, schema WebhookSolicitado`,
  },
  {
    topic: 'notice retries',
    standard: "each PSP's own",
    dialect: 'up to 4 more attempts, 20, 30, 60 and 120 minutes apart',
    handling: 'reconciliation through GET /pix finds what notices miss',
    source: `${INTER_REFERENCE}, PUT /webhook/{chave} description`,
  },
  {
    topic: 'notice body',
    standard: '{ "pix": [ ... ] }',
    dialect: 'the schema says { "pix": [ ... ] }; its examples show a bare array of PIX',
    handling: 'readPixNotice accepts both',
    source: `${INTER_REFERENCE}, request body WebhookPixBody and its examples`,
  },
  {
    topic: 'GET /pix txid filter',
    standard: 'txid',
    dialect: 'txId',
    handling: 'receivedTxidParam',
    source: `${INTER_REFERENCE}, GET /pix, parameter txId`,
  },
  {
    topic: 'GET /pix contents',
    standard: 'every PIX received',
    dialect: 'only PIX paid through a QR code of a Pix Cobrança (cob, cobv) or of a boleto with Pix',
    handling: 'enough for reconciliation: we only look for payments of our charges',
    source: `${INTER_REFERENCE}, GET /pix description`,
  },
  {
    topic: 'valor.desconto.modalidade',
    standard: 'integer',
    dialect: 'typed string in its CobVValor; its request example sends all three modalities as strings',
    handling: 'we send the standard integer',
    source: `${INTER_REFERENCE}, schema CobVValor; example cobBody1`,
  },
  {
    topic: 'discount date',
    standard: 'on or before the due date ("menor ou igual")',
    dialect: 'before the due date ("menor que")',
    handling: 'not changed: a discount until the due date itself may be refused by Inter',
    source: `${INTER_REFERENCE}, schema DescontoDataFixa`,
  },
  {
    topic: 'validadeAposVencimento',
    standard: 'days counted after the due date moved to the next business day',
    dialect: 'calendar days after the due date itself (its examples)',
    handling: 'none: we give 60 days either way',
    source: `${INTER_REFERENCE}, schema CobDataDeVencimento examples`,
  },
  {
    topic: 'CPF and CNPJ patterns',
    standard: 'CNPJ ^[0-9A-Z]{14}$ (letters allowed); CPF written with slashes (our fix F1)',
    dialect: 'CPF \\d{11}, CNPJ \\d{14} (digits only)',
    handling: 'payers carry digit-only tax ids today',
    source: `${INTER_REFERENCE}, schemas PessoaFisica, PessoaJuridica`,
  },
];

const inter: PixDialect = {
  name: 'inter',
  apiRoot: (accountBaseUrl) => `${trimSlash(accountBaseUrl)}/pix/v2`,
  tokenUrl: (accountBaseUrl) => `${trimSlash(accountBaseUrl)}/oauth/v2/token`,
  scopes: PIX_SCOPES,
  headers: (checkingAccount): Record<string, string> => {
    const digits = (checkingAccount ?? '').replace(/\D/g, '').replace(/^0+/, '');
    return digits ? { 'x-conta-corrente': digits } : {};
  },
  webhookKey: (chave) => chave.replace(/^\+/, ''),
  receivedTxidParam: 'txId',
  requestsPerMinute: { cobv: 120, pix: 120, webhook: 10 },
  differences: INTER_DIFFERENCES,
};

export const PIX_DIALECTS: Record<PixDialectName, PixDialect> = { standard, inter };

/** The dialect of an account's provider kind: Inter's accounts speak Inter's, any other the standard. */
export function dialectOf(providerKind: string): PixDialect {
  return providerKind === 'inter' ? inter : standard;
}
