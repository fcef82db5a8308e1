/** Inter's production API root (mutual TLS with the certificate issued for the integration). */
export const INTER_PRODUCTION_BASE_URL = 'https://cdpj.partners.bancointer.com.br';

/** Paths under the API root. */
export const INTER_PATHS = {
  token: '/oauth/v2/token',
  charges: '/cobranca/v3/cobrancas',
  charge: (codigoSolicitacao: string) => `/cobranca/v3/cobrancas/${encodeURIComponent(codigoSolicitacao)}`,
  cancel: (codigoSolicitacao: string) => `/cobranca/v3/cobrancas/${encodeURIComponent(codigoSolicitacao)}/cancelar`,
  pdf: (codigoSolicitacao: string) => `/cobranca/v3/cobrancas/${encodeURIComponent(codigoSolicitacao)}/pdf`,
  webhook: '/cobranca/v3/cobrancas/webhook',
} as const;

export const INTER_SCOPES = {
  read: 'boleto-cobranca.read',
  write: 'boleto-cobranca.write',
} as const;

/** The scopes our adapter asks for: one token serves every operation. */
export const INTER_COBRANCA_SCOPE = `${INTER_SCOPES.read} ${INTER_SCOPES.write}`;

/** Optional header naming the checking account when the integration has several. */
export const CHECKING_ACCOUNT_HEADER = 'x-conta-corrente';
