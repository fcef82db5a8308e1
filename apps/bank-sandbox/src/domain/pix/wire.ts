import type { AccountHolder } from '../../db/inter';
import type { SandboxBank } from '../inter/terms';
import { amountDue, decimal } from './amount-due';
import type { AmountComponents, CobvRequest, CobvRow, ReceivedRow, RefundRow } from '../../db/pix';

/**
 * The PIX API's answers in the standard's shapes (CobVCompleta, Pix, Devolucao, CobVPayload), built
 * from the sandbox's rows. Amounts are decimal strings "123.45", instants RFC 3339 in UTC.
 */

/** Devolucao. */
export function refundView(refund: RefundRow) {
  return {
    id: refund.id,
    rtrId: refund.rtr_id,
    valor: decimal(refund.amount_cents),
    natureza: refund.natureza,
    ...(refund.descricao ? { descricao: refund.descricao } : {}),
    horario: {
      solicitacao: refund.requested_at.toISOString(),
      ...(refund.settled_at ? { liquidacao: refund.settled_at.toISOString() } : {}),
    },
    status: refund.status,
  };
}

/** componentesValor: only the parts that are there (original always). */
function componentsView(components: AmountComponents) {
  const parts: Record<string, { valor: string }> = { original: { valor: decimal(components.original) } };
  for (const name of ['multa', 'juros', 'desconto', 'abatimento'] as const)
    if (components[name] > 0) parts[name] = { valor: decimal(components[name]) };
  return parts;
}

/** Pix: a PIX received, with its devoluções when it has any. */
export function pixView(received: ReceivedRow, refunds: RefundRow[]) {
  const own = refunds.filter((r) => r.end_to_end_id === received.end_to_end_id);
  return {
    endToEndId: received.end_to_end_id,
    ...(received.txid ? { txid: received.txid } : {}),
    valor: decimal(received.amount_cents),
    componentesValor: componentsView(received.components),
    chave: received.chave,
    horario: received.paid_at.toISOString(),
    ...(received.info_pagador ? { infoPagador: received.info_pagador } : {}),
    ...(own.length > 0 ? { devolucoes: own.map(refundView) } : {}),
  };
}

/** The receiver of a client's cobvs (recebedor): its holder, at the sandbox's address. */
export function receiverView(bank: SandboxBank, holder: AccountHolder) {
  const taxId = holder.tax_id.replace(/\D/g, '');
  return {
    ...(taxId.length === 11 ? { cpf: taxId } : { cnpj: taxId }),
    nome: holder.name,
    logradouro: bank.payee.address ?? 'Avenida Paulista, 1000',
    cidade: holder.city,
    uf: 'SP',
    cep: '01310100',
  };
}

/** The cobv fields of a revision as sent (CobVSolicitada), calendar aside. */
function sentFields(request: CobvRequest) {
  return {
    ...(request.devedor ? { devedor: request.devedor } : {}),
    valor: request.valor,
    chave: request.chave,
    ...(request.solicitacaoPagador !== undefined ? { solicitacaoPagador: request.solicitacaoPagador } : {}),
    ...(request.infoAdicionais !== undefined ? { infoAdicionais: request.infoAdicionais } : {}),
  };
}

export interface CobvContext {
  receiver: ReturnType<typeof receiverView>;
  received: ReceivedRow[];
  refunds: RefundRow[];
}

/** CobVCompleta: GET /cobv/{txid} (and the items of GET /cobv, and PUT/PATCH answers). */
export function cobvView(row: CobvRow, context: CobvContext, revision: number = row.revision) {
  const request = row.revisions[revision] ?? row.request;
  const received = context.received.filter((r) => r.txid === row.txid);
  return {
    calendario: {
      criacao: row.created_at.toISOString(),
      dataDeVencimento: request.calendario.dataDeVencimento,
      validadeAposVencimento: request.calendario.validadeAposVencimento ?? row.days_payable_after_due,
    },
    txid: row.txid,
    revisao: revision,
    loc: {
      id: row.loc_id,
      txid: row.txid,
      location: row.location,
      tipoCob: 'cobv' as const,
      criacao: row.loc_created_at.toISOString(),
    },
    location: row.location,
    status: row.status,
    recebedor: context.receiver,
    ...sentFields(request),
    pixCopiaECola: row.pix_copy_and_paste,
    ...(received.length > 0 ? { pix: received.map((r) => pixView(r, context.refunds)) } : {}),
  };
}

/**
 * CobVPayload: what the location serves to a payer's app (as JSON, unsigned: a real PSP answers a JWS),
 * with the amount due on `payDate` (DPP, default today in Brasília).
 */
export function cobvPayloadView(row: CobvRow, receiver: CobvContext['receiver'], payDate: string, presentedAt: Date) {
  const due = amountDue(row.request, payDate);
  const { components } = due;
  const request = row.request;
  return {
    calendario: {
      criacao: row.created_at.toISOString(),
      apresentacao: presentedAt.toISOString(),
      dataDeVencimento: request.calendario.dataDeVencimento,
      validadeAposVencimento: row.days_payable_after_due,
    },
    ...(request.devedor ? { devedor: request.devedor } : {}),
    recebedor: receiver,
    txid: row.txid,
    revisao: row.revision,
    status: row.status,
    valor: {
      original: decimal(components.original),
      ...(components.multa > 0 ? { multa: decimal(components.multa) } : {}),
      ...(components.juros > 0 ? { juros: decimal(components.juros) } : {}),
      ...(components.abatimento > 0 ? { abatimento: decimal(components.abatimento) } : {}),
      ...(components.desconto > 0 ? { desconto: decimal(components.desconto) } : {}),
      final: decimal(due.finalCents),
    },
    chave: row.chave,
    ...(request.solicitacaoPagador !== undefined ? { solicitacaoPagador: request.solicitacaoPagador } : {}),
    ...(request.infoAdicionais !== undefined ? { infoAdicionais: request.infoAdicionais } : {}),
  };
}
