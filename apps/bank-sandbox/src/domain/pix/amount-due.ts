import { epochDay } from '../calendar-date';
import type { AmountComponents, CobvRequest } from '../../db/pix';

/**
 * What a cobv asks on the day it is paid (a Brasília calendar date), by the modalities the standard
 * defines for `valor` (CobVValor): final = original - abatimento - desconto + multa + juros, each
 * rounded to the cent (half up). Percentages are of `original`. "Dias úteis" are Monday to Friday (the
 * sandbox keeps no holiday calendar). Discounts apply up to the due date, fine and interest after it.
 *  - multa: 1 fixed amount, 2 percentage (once, from the first day late);
 *  - juros: 1 amount per calendar day, 2 % per calendar day, 3 % per month (a 30-day month), 4 % per
 *    year (365 days), 5 to 8 the same per business day;
 *  - desconto: 1 fixed amount until each date of descontoDataFixa (the first date not yet past), 2 a
 *    percentage until each date, 3 amount per calendar day paid early, 4 per business day early,
 *    5 % per calendar day early, 6 % per business day early;
 *  - abatimento: 1 fixed amount, 2 percentage, whenever paid.
 */
export interface AmountDue {
  /** 'payable': the cobv can be paid that day; 'past_validity': later than validadeAposVencimento days after its due date. */
  outcome: 'payable' | 'past_validity';
  finalCents: number;
  components: AmountComponents;
}

export const DEFAULT_DAYS_PAYABLE_AFTER_DUE = 30;

export function amountDue(request: CobvRequest, payDate: string): AmountDue {
  const { valor, calendario } = request;
  const original = cents(valor.original);
  const due = calendario.dataDeVencimento;
  const daysLate = epochDay(payDate) - epochDay(due);
  const validity = calendario.validadeAposVencimento ?? DEFAULT_DAYS_PAYABLE_AFTER_DUE;
  const abatimento = valor.abatimento ? byModality(valor.abatimento, original) : 0;
  const desconto = daysLate <= 0 && valor.desconto ? discount(valor.desconto, original, payDate, due) : 0;
  const multa = daysLate > 0 && valor.multa ? byModality(valor.multa, original) : 0;
  const juros = daysLate > 0 && valor.juros ? interest(valor.juros, original, payDate, due) : 0;
  const finalCents = Math.max(0, original - abatimento - desconto + multa + juros);
  return {
    outcome: daysLate > validity ? 'past_validity' : 'payable',
    finalCents,
    components: { original, multa, juros, desconto, abatimento },
  };
}

/** A decimal string "123.45" in cents. */
export function cents(text: string): number {
  const match = /^(\d{1,10})\.(\d{2})$/.exec(text);
  if (!match) throw new RangeError(`not a decimal amount with two places: "${text}"`);
  return Number(match[1]) * 100 + Number(match[2]);
}

/** Cents as the standard writes amounts: "123.45". */
export function decimal(amountCents: number): string {
  return `${Math.trunc(amountCents / 100)}.${String(amountCents % 100).padStart(2, '0')}`;
}

/** `percent` % of `base` cents, to the cent, half up: percentages are sent with two places, so in hundredths. */
function percentOf(base: number, percent: string): number {
  return Math.round((base * cents(percent)) / 10_000);
}

/** Modality 1 a fixed amount, 2 a percentage of original (multa and abatimento). */
function byModality(rule: { modalidade: number; valorPerc: string }, original: number): number {
  return rule.modalidade === 1 ? cents(rule.valorPerc) : percentOf(original, rule.valorPerc);
}

function interest(
  rule: { modalidade: number; valorPerc: string },
  original: number,
  payDate: string,
  due: string,
): number {
  const businessDays = rule.modalidade >= 5;
  const days = businessDays ? businessDaysBetween(due, payDate) : epochDay(payDate) - epochDay(due);
  const kind = businessDays ? rule.modalidade - 4 : rule.modalidade;
  const value = cents(rule.valorPerc);
  switch (kind) {
    case 1:
      return value * days;
    case 2:
      return Math.round((original * value * days) / 10_000);
    case 3:
      return Math.round((original * value * days) / 10_000 / 30);
    default:
      return Math.round((original * value * days) / 10_000 / 365);
  }
}

function discount(
  rule: NonNullable<CobvRequest['valor']['desconto']>,
  original: number,
  payDate: string,
  due: string,
): number {
  if (rule.modalidade === 1 || rule.modalidade === 2) {
    const open = (rule.descontoDataFixa ?? [])
      .filter((d) => d.data >= payDate)
      .sort((a, b) => (a.data < b.data ? -1 : 1))[0];
    if (!open) return 0;
    return rule.modalidade === 1 ? cents(open.valorPerc) : percentOf(original, open.valorPerc);
  }
  const perDay = rule.valorPerc ?? '0.00';
  const businessDays = rule.modalidade === 4 || rule.modalidade === 6;
  const days = businessDays ? businessDaysBetween(payDate, due) : epochDay(due) - epochDay(payDate);
  const total =
    rule.modalidade === 3 || rule.modalidade === 4 ? cents(perDay) * days : percentOf(original * days, perDay);
  // A discount never takes the whole amount (the standard refuses one that would).
  return Math.min(total, original - 1);
}

/** Business days (Monday to Friday) after `from` up to and including `to`. */
export function businessDaysBetween(from: string, to: string): number {
  let count = 0;
  for (let day = epochDay(from) + 1; day <= epochDay(to); day++) {
    // 1970-01-01 was a Thursday: day 0 is weekday 4.
    const weekday = (day + 4) % 7;
    if (weekday !== 0 && weekday !== 6) count++;
  }
  return count;
}
