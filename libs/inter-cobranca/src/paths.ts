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
  /** The webhook callbacks sent (dataHoraInicio, dataHoraFim, pagina, tamanhoPagina 10-50, codigoSolicitacao). */
  callbacks: '/cobranca/v3/cobrancas/webhook/callbacks',
  /** Sends the callbacks of up to 50 charges again ({ codigoSolicitacao: [...] }). */
  callbacksRetry: '/cobranca/v3/cobrancas/webhook/callbacks/retry',
} as const;

export const INTER_SCOPES = {
  read: 'boleto-cobranca.read',
  write: 'boleto-cobranca.write',
} as const;

/** The scopes our adapter asks for: one token serves every operation. */
export const INTER_COBRANCA_SCOPE = `${INTER_SCOPES.read} ${INTER_SCOPES.write}`;

/**
 * Optional header naming the checking account the call is for (Inter's reference: digits with the check
 * digit, no leading zeros); Inter also sends it on its callbacks.
 */
export const CHECKING_ACCOUNT_HEADER = 'x-conta-corrente';
