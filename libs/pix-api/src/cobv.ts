import type { PixDialect } from './dialects';
import { decimalOf, percentOfBasisPoints } from './money';
import { DISCOUNT_MODALITY, FINE_MODALITY, INTEREST_MODALITY } from './modalities';
import { COBV_STATUS } from './status';

/** A receivable's terms, as a PIX charge with a due date (cobv) carries them. Amounts in cents. */
export interface CobvTerms {
  txid: string;
  /** The receiver's PIX key. */
  chave: string;
  /** YYYY-MM-DD. */
  dueDate: string;
  amountCents: number;
  payer: CobvPayer;
  /** Fine once due, in basis points of the amount (250 = 2.50 %); 0 for none. */
  fineBp: number;
  /** Interest a calendar day after the due date, in cents; 0 for none. */
  interestPerDayCents: number;
  /** A fixed amount off when paid until a date (YYYY-MM-DD, not after the due date). */
  discount: { amountCents: number; until: string } | null;
  /** Calendar days the charge can still be paid after its due date. */
  daysPayableAfterDue: number;
  /** Shown to the payer (solicitacaoPagador), at most 140 characters. */
  message?: string;
}

export interface CobvPayer {
  /** CPF (11 digits) or CNPJ (14 characters), punctuation allowed. */
  taxId: string;
  name: string;
  address?: string;
  city?: string;
  /** Two-letter state. */
  state?: string;
  /** Eight digits, punctuation allowed. */
  zipCode?: string;
  email?: string;
}

/** The days a cobv stays payable after its due date unless told otherwise: as long as the boleto's. */
export const DAYS_PAYABLE_AFTER_DUE = 60;

/** The body of PUT /cobv/{txid} (the standard's CobVSolicitada) for `terms`. */
export function cobvBody(terms: CobvTerms, _dialect: PixDialect): Record<string, unknown> {
  const body: Record<string, unknown> = {
    calendario: { dataDeVencimento: terms.dueDate, validadeAposVencimento: terms.daysPayableAfterDue },
    devedor: debtorOf(terms.payer),
    valor: valueOf(terms),
    chave: terms.chave,
  };
  if (terms.message) body.solicitacaoPagador = terms.message.slice(0, 140);
  return body;
}

/** The body of PATCH /cobv/{txid} that cancels it (the standard's CobVRevisada). */
export function cancelBody(_dialect: PixDialect): Record<string, unknown> {
  return { status: COBV_STATUS.removedByReceiver };
}

function valueOf(terms: CobvTerms): Record<string, unknown> {
  const valor: Record<string, unknown> = { original: decimalOf(terms.amountCents) };
  if (terms.fineBp > 0) {
    valor.multa = { modalidade: FINE_MODALITY.percentage, valorPerc: percentOfBasisPoints(terms.fineBp) };
  }
  if (terms.interestPerDayCents > 0) {
    valor.juros = {
      modalidade: INTEREST_MODALITY.amountPerCalendarDay,
      valorPerc: decimalOf(terms.interestPerDayCents),
    };
  }
  if (terms.discount && terms.discount.amountCents > 0) {
    valor.desconto = {
      modalidade: DISCOUNT_MODALITY.fixedAmountUntilDate,
      descontoDataFixa: [{ data: terms.discount.until, valorPerc: decimalOf(terms.discount.amountCents) }],
    };
  }
  return valor;
}

function debtorOf(payer: CobvPayer): Record<string, string> {
  const taxId = payer.taxId.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
  const debtor: Record<string, string> =
    taxId.length === 11 ? { cpf: taxId, nome: payer.name } : { cnpj: taxId, nome: payer.name };
  debtor.nome = payer.name.slice(0, 200);
  if (payer.email) debtor.email = payer.email;
  if (payer.address) debtor.logradouro = payer.address.slice(0, 200);
  if (payer.city) debtor.cidade = payer.city.slice(0, 200);
  if (payer.state) debtor.uf = payer.state.toUpperCase().slice(0, 2);
  if (payer.zipCode) debtor.cep = payer.zipCode.replace(/\D/g, '').slice(0, 8);
  return debtor;
}

/** The body of PUT /pix/{e2eid}/devolucao/{id} (the standard's DevolucaoSolicitada). */
export function refundBody(amountCents: number, description?: string): Record<string, unknown> {
  const body: Record<string, unknown> = { valor: decimalOf(amountCents) };
  if (description) body.descricao = description.slice(0, 140);
  return body;
}

/** The body of PUT /webhook/{chave} (the standard's WebhookSolicitado). */
export function webhookBody(webhookUrl: string): Record<string, unknown> {
  return { webhookUrl };
}
