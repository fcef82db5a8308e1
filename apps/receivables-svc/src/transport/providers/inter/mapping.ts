import { taxIdDigits } from '@payments/tax-id';
import {
  CreateChargeRequest,
  interViolations,
  seuNumeroFor,
  type ChargeView,
  type InterViolation,
} from '@payments/inter-cobranca';
import type { BatchRegistrationOutcome, ChargeRequest, ProviderChargeState } from '../../../domain/ports';

const DAY_MS = 86_400_000;

/** Our charge as Inter's create request: a request that breaks Inter's contract comes back as its violations. */
export function toCreateRequest(
  request: ChargeRequest,
  numDiasAgenda: number,
): { ok: true; body: CreateChargeRequest } | { ok: false; violations: InterViolation[] } {
  const payer = request.payer;
  const taxId = taxIdDigits(payer.taxId);
  const cut = (text: string | null, max: number) =>
    text === null ? undefined : text.trim().slice(0, max) || undefined;
  const pagador = {
    cpfCnpj: taxId,
    tipoPessoa: taxId.length === 14 ? ('JURIDICA' as const) : ('FISICA' as const),
    nome: cut(payer.name, 100) ?? '',
    endereco: cut(payer.address, 100) ?? '',
    ...optional('numero', cut(payer.number, 10)),
    ...optional('bairro', cut(payer.neighborhood, 60)),
    cidade: cut(payer.city, 60) ?? '',
    uf: (payer.state ?? '').trim().toUpperCase(),
    cep: (payer.zipCode ?? '').replace(/\D/g, ''),
    ...optional('email', payer.email && payer.email.length <= 50 ? payer.email : undefined),
  };
  const lines = request.instructions.map((line) => line.slice(0, 78)).slice(0, 5);
  const body: CreateChargeRequest = {
    seuNumero: seuNumeroFor(request.idempotencyKey),
    valorNominal: request.amountCents / 100,
    dataVencimento: request.dueDate,
    numDiasAgenda,
    pagador,
    ...(request.discount && request.discount.amountCents > 0
      ? {
          desconto: {
            codigo: 'VALORFIXODATAINFORMADA' as const,
            valor: request.discount.amountCents / 100,
            quantidadeDias: Math.max(0, daysBetween(request.discount.until, request.dueDate)),
          },
        }
      : {}),
    ...(request.fineBp > 0 ? { multa: { codigo: 'PERCENTUAL' as const, taxa: request.fineBp / 100 } } : {}),
    ...(request.interestPerDayCents > 0
      ? { mora: { codigo: 'VALORDIA' as const, valor: request.interestPerDayCents / 100 } }
      : {}),
    ...(lines.length > 0
      ? {
          mensagem: Object.fromEntries(
            lines.map((line, i) => [`linha${i + 1}`, line]),
          ) as CreateChargeRequest['mensagem'],
        }
      : {}),
  };
  const violations = interViolations(CreateChargeRequest, body);
  return violations.length === 0 ? { ok: true, body } : { ok: false, violations };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/**
 * What a consulted charge means for its registration: issued (slip data present) is registered, with
 * its PIX data when Inter made a PIX charge for it (an account without a PIX key gets a slip without
 * one: registered with empty PIX fields); still EM_PROCESSAMENTO is unavailable with its id (the next
 * attempt consults it again); FALHA_EMISSAO, or cancelled or expired before it was registered, is
 * rejected with its id: nothing of it is payable.
 */
export function registrationOutcome(
  view: ChargeView,
  kind: ChargeRequest['kind'],
  pdfUrl: string,
): BatchRegistrationOutcome {
  const { situacao, codigoSolicitacao } = view.cobranca;
  if (situacao === 'FALHA_EMISSAO')
    return {
      kind: 'rejected',
      code: 'inter_issue_failed',
      message: 'Inter could not issue the charge (FALHA_EMISSAO)',
      chargeId: codigoSolicitacao,
    };
  if (situacao === 'CANCELADO' || situacao === 'EXPIRADO')
    return {
      kind: 'rejected',
      code: 'inter_not_open',
      message: `the charge is ${situacao} at Inter`,
      chargeId: codigoSolicitacao,
    };
  const slip = view.boleto;
  if (situacao === 'EM_PROCESSAMENTO' || !slip?.nossoNumero)
    return { kind: 'unavailable', reason: 'Inter has not issued the charge yet', chargeId: codigoSolicitacao };
  // A PIX-only charge is issued as Inter's boleto with PIX and only its PIX data is handed on; without
  // PIX (no key at the account) its slip is what the payer can pay, so the slip is handed on instead.
  const slipShown = kind !== 'pix' || !view.pix;
  return {
    kind: 'registered',
    charge: {
      chargeId: codigoSolicitacao,
      ourNumber: slip.nossoNumero,
      barcode: slipShown ? slip.codigoBarras : null,
      typeableLine: slipShown ? slip.linhaDigitavel : null,
      pixCopyAndPaste: view.pix?.pixCopiaECola ?? '',
      // Inter serves no QR code image: the QR is drawn from pixCopyAndPaste by whoever shows it.
      qrcodeImageUrl: '',
      // The bank's PDF is behind its API (replaced by a signed gateway link in receivables-svc).
      pdfUrl,
    },
  };
}

/** A consulted (or listed) charge as the payment confirmation sees it. */
export function chargeState(view: ChargeView): ProviderChargeState {
  const charge = view.cobranca;
  switch (charge.situacao) {
    case 'RECEBIDO':
    case 'MARCADO_RECEBIDO': {
      // What the bank received (below or above the amount due alike); the nominal value only when it
      // reports no total received.
      const received = charge.valorTotalRecebido ?? charge.valorNominal;
      return {
        kind: 'paid',
        payment: {
          // A consult or a list gives the day only (dataSituacao): the time is unknown.
          paidAt: paidAt(charge.dataSituacao),
          paidAtPrecision: 'date',
          amountPaidCents: reaisToCents(received),
          // Inter's charge does not report its tariff; it is settled on the statement.
          feeCents: 0,
          method: paymentMethod(charge.situacao, charge.origemRecebimento),
        },
      };
    }
    case 'CANCELADO':
    case 'EXPIRADO':
      return { kind: 'cancelled' };
    default:
      return { kind: 'open' };
  }
}

/** How Inter says a charge was paid: marked paid by the issuer (manual), or by PIX or slip. */
export function paymentMethod(situacao: string, origem: string | undefined): 'boleto' | 'pix' | 'manual' {
  if (situacao === 'MARCADO_RECEBIDO') return 'manual';
  return origem === 'PIX' ? 'pix' : 'boleto';
}

/** Reais as Inter writes them (a number or a decimal string) in cents. */
export function reaisToCents(value: string | number): number {
  return Math.round(Number(value) * 100);
}

/**
 * dataSituacao is a calendar day in Brasília: the payment is taken at 00:00:00 there (the time
 * is unknown, and the history says so). Brazil keeps UTC-3 all year since 2019.
 */
export function paidAt(date: string | undefined): Date {
  return date ? new Date(`${date}T00:00:00-03:00`) : new Date();
}
