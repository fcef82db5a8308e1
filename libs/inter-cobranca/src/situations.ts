/**
 * The `situacao` of an Inter Cobrança v3 charge (SituacaoCobrancaEnum of Inter's API reference,
 * developers.inter.co/references/cobranca-bolepix).
 *
 *   EM_PROCESSAMENTO  accepted, not issued yet (creation is asynchronous)
 *   FALHA_EMISSAO     Inter could not issue it: final, nothing to pay
 *   A_RECEBER         issued and open
 *   ATRASADO          open and past its due date (still payable for numDiasAgenda days)
 *   PROTESTO          open, sent to protest
 *   RECEBIDO          paid (by slip or PIX: origemRecebimento)
 *   MARCADO_RECEBIDO  marked as paid by the issuer outside the bank
 *   CANCELADO         cancelled by the issuer
 *   EXPIRADO          numDiasAgenda passed unpaid: cancelled by Inter
 */
export const INTER_SITUATIONS = [
  'EM_PROCESSAMENTO',
  'FALHA_EMISSAO',
  'A_RECEBER',
  'ATRASADO',
  'PROTESTO',
  'RECEBIDO',
  'MARCADO_RECEBIDO',
  'CANCELADO',
  'EXPIRADO',
] as const;
export type InterSituationName = (typeof INTER_SITUATIONS)[number];

/** Issued and still payable. */
export const OPEN_SITUATIONS: readonly InterSituationName[] = ['A_RECEBER', 'ATRASADO', 'PROTESTO'];
export const PAID_SITUATIONS: readonly InterSituationName[] = ['RECEBIDO', 'MARCADO_RECEBIDO'];
export const CLOSED_UNPAID_SITUATIONS: readonly InterSituationName[] = ['CANCELADO', 'EXPIRADO'];

/** How a charge was paid. */
export const INTER_PAYMENT_ORIGINS = ['BOLETO', 'PIX'] as const;
export type InterPaymentOrigin = (typeof INTER_PAYMENT_ORIGINS)[number];

/**
 * The situations a webhook callback (and the callback history) reports, as Inter's reference lists them
 * (SituacaoCobrancaCallbackEnum): a subset of the charge's situations.
 */
export const INTER_CALLBACK_SITUATIONS = [
  'RECEBIDO',
  'A_RECEBER',
  'MARCADO_RECEBIDO',
  'CANCELADO',
  'EXPIRADO',
  'FALHA_EMISSAO',
] as const satisfies readonly InterSituationName[];
export type InterCallbackSituation = (typeof INTER_CALLBACK_SITUATIONS)[number];
