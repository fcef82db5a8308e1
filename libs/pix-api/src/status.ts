/** The status of a cobv's record (the standard's CobrancaStatus). */
export const COBV_STATUS = {
  active: 'ATIVA',
  completed: 'CONCLUIDA',
  removedByReceiver: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
  removedByPsp: 'REMOVIDA_PELO_PSP',
} as const;

export type CobvStatus = (typeof COBV_STATUS)[keyof typeof COBV_STATUS];

/** The status of a devolução (the standard's Devolucao.status). */
export const REFUND_STATUS = {
  processing: 'EM_PROCESSAMENTO',
  returned: 'DEVOLVIDO',
  notDone: 'NAO_REALIZADO',
} as const;

export type RefundStatus = (typeof REFUND_STATUS)[keyof typeof REFUND_STATUS];
