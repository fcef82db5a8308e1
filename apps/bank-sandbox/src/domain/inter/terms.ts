import { toCents } from '@payments/br-format';
import { MAX_MERCHANT_CITY, MAX_MERCHANT_NAME, toMerchantText } from '../br-code';
import { epochDay } from '../calendar-date';
import type { Charge, ChargeTerms } from '../charge';
import type { PayeeAccount } from '../slip-issuer';
import type { PayeeDetails } from '../slip-pdf';
import type { EmitirCobrancaRequestBody } from './contract';
import type { AccountHolder, InterChargeRow } from '../../db/inter';

/** What the sandbox knows of its own bank, for the Inter clients' accounts. */
export interface SandboxBank {
  account: PayeeAccount;
  payee: PayeeDetails;
}

/** The holder of a client's account: the one set by the control, else the sandbox's own payee. */
export function holderOf(bank: SandboxBank, holder: AccountHolder | null): AccountHolder {
  return (
    holder ?? {
      name: bank.payee.name,
      tax_id: bank.payee.taxId,
      city: bank.account.pix.merchantCity,
      pix_key: bank.account.pix.key,
    }
  );
}

/** The account a client's charges are issued on: the sandbox's bank, agency and wallet, the client's account number. */
export function clientAccount(bank: SandboxBank, accountNumber: string, holder: AccountHolder): PayeeAccount {
  return {
    ...bank.account,
    account: accountNumber,
    pix: {
      // Only read when the account has a PIX key: a boleto without one carries no BR Code.
      key: holder.pix_key ?? '',
      merchantName: merchantText(holder.name, MAX_MERCHANT_NAME),
      merchantCity: merchantText(holder.city, MAX_MERCHANT_CITY),
    },
  };
}

/** The beneficiary box of a client's slips. */
export function clientPayee(bank: SandboxBank, accountNumber: string, holder: AccountHolder): PayeeDetails {
  return { ...bank.payee, name: holder.name, taxId: holder.tax_id, account: accountNumber };
}

/** BR Code name and city: folded to ASCII upper case and cut to the field's size. */
function merchantText(value: string, max: number): string {
  return toMerchantText(value).slice(0, max).trim() || 'SANDBOX';
}

/** The sandbox's terms of an Inter create request (for the slip PDF and the barcode). */
export function termsOf(request: EmitirCobrancaRequestBody): ChargeTerms {
  const amountCents = toCents(request.valorNominal);
  const payer = request.pagador;
  return {
    kind: 'hybrid_slip',
    amountCents,
    issueDate: request.dataVencimento,
    dueDate: request.dataVencimento,
    payer: {
      name: payer.nome,
      taxId: payer.cpfCnpj,
      address: [payer.endereco, payer.numero, payer.complemento, payer.bairro].filter(Boolean).join(', '),
      city: payer.cidade,
      state: payer.uf,
      zipCode: payer.cep,
    },
    discount: request.desconto ? discountOf(request.desconto, amountCents, request.dataVencimento) : null,
    finePercentBp: request.multa ? fineBp(request.multa, amountCents) : 0,
    interestPerDayCents: request.mora ? interestPerDayCents(request.mora, amountCents) : 0,
    instructions: Object.values(request.mensagem ?? {}).filter((line): line is string => Boolean(line)),
    descriptionLines: [],
    reference: request.seuNumero,
  };
}

function discountOf(
  discount: NonNullable<EmitirCobrancaRequestBody['desconto']>,
  amountCents: number,
  dueDate: string,
): ChargeTerms['discount'] {
  const cents =
    discount.codigo === 'VALORFIXODATAINFORMADA'
      ? reaisToCents(discount.valor ?? 0)
      : Math.round((amountCents * (discount.taxa ?? 0)) / 100);
  if (cents <= 0) return null;
  const until = new Date((epochDay(dueDate) - discount.quantidadeDias) * 86_400_000).toISOString().slice(0, 10);
  return { amountCents: cents, until };
}

function fineBp(fine: NonNullable<EmitirCobrancaRequestBody['multa']>, amountCents: number): number {
  if (fine.codigo === 'PERCENTUAL') return Math.round((fine.taxa ?? 0) * 100);
  return Math.round((reaisToCents(fine.valor ?? 0) * 10_000) / amountCents);
}

function interestPerDayCents(interest: NonNullable<EmitirCobrancaRequestBody['mora']>, amountCents: number): number {
  if (interest.codigo === 'VALORDIA') return reaisToCents(interest.valor ?? 0);
  // A monthly rate, spread over 30 days as Brazilian banks do.
  return Math.round((amountCents * (interest.taxa ?? 0)) / 100 / 30);
}

/** Secondary amounts (discount, fine, interest) to the nearest cent: only the nominal value must be exact. */
function reaisToCents(reais: number): number {
  return Math.round(reais * 100);
}

/** An issued Inter charge as the sandbox's slip PDF renderer wants it. */
export function chargeForPdf(row: InterChargeRow): Charge {
  const terms = termsOf(row.request);
  return {
    ...terms,
    issueDate: row.issue_date,
    chargeId: row.codigo_solicitacao,
    ourNumber: row.nosso_numero ?? '',
    barcode: row.barcode,
    typeableLine: row.typeable_line,
    pixCopyAndPaste: row.pix_copy_and_paste ?? '',
    status: row.paid_at ? 'paid' : row.situacao === 'CANCELADO' ? 'cancelled' : 'registered',
    createdAt: row.created_at,
    cancelledAt: null,
    settlement: null,
  };
}
