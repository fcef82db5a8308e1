import { hasAtMostTwoDecimals } from '@payments/br-format';
import { isValidCnpj, isValidCpf } from '@payments/tax-id';
import { epochDay } from '../calendar-date';
import type { EmitirCobrancaRequestBody, Violacao } from './contract';

/** Brasília's date and time of day (Inter's calendar and clock). */
export function brasiliaClock(instant: Date = new Date()): { date: string; hour: number; minute: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: 'America/Sao_Paulo',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour), minute: Number(parts.minute) };
}

/** "Cobranças com vencimento para o mesmo dia só podem ser emitidas até às 19h59." */
export const SAME_DAY_LAST_HOUR = 19;

/**
 * What Inter refuses in a create body that its schema cannot say: cents beyond two places, a CPF/CNPJ
 * whose check digits are wrong, a CEP that is not 8 digits, a due date in the past or today after
 * 19:59 Brasília, PIX as the only way to pay. Each refusal names Inter's field.
 */
export function createRefusals(request: EmitirCobrancaRequestBody, now: Date = new Date()): Violacao[] {
  const refusals: Violacao[] = [];
  const refuse = (propriedade: string, razao: string, valor?: string) =>
    refusals.push({ propriedade, razao, ...(valor !== undefined ? { valor } : {}) });
  if (!hasAtMostTwoDecimals(request.valorNominal))
    refuse('valorNominal', 'deve ter no máximo 2 casas decimais', String(request.valorNominal));
  const { cpfCnpj, tipoPessoa, cep } = request.pagador;
  const valid = tipoPessoa === 'FISICA' ? isValidCpf(cpfCnpj) : isValidCnpj(cpfCnpj);
  if (!valid) refuse('pagador.cpfCnpj', `não é um ${tipoPessoa === 'FISICA' ? 'CPF' : 'CNPJ'} válido`, cpfCnpj);
  if (!/^\d{8}$/.test(cep)) refuse('pagador.cep', 'deve conter 8 dígitos', cep);
  const dueDateRefusal = dueDateProblem(request.dataVencimento, now);
  if (dueDateRefusal) refuse('dataVencimento', dueDateRefusal, request.dataVencimento);
  const ways = request.formasRecebimento;
  if (ways && ways.length === 1 && ways[0] === 'PIX')
    refuse('formasRecebimento', 'não é possível informar somente PIX como forma de recebimento');
  return refusals;
}

/** Why a due date is refused at `now`, or null: not before today, and today only until 19:59 Brasília. */
export function dueDateProblem(dueDate: string, now: Date = new Date()): string | null {
  const clock = brasiliaClock(now);
  const days = epochDay(dueDate) - epochDay(clock.date);
  if (days < 0) return 'a data de vencimento não pode ser anterior à data atual';
  if (days === 0 && clock.hour > SAME_DAY_LAST_HOUR)
    return 'cobranças com vencimento para o mesmo dia só podem ser emitidas até às 19h59';
  return null;
}

/** The payer's tax id as the duplicate key compares it: digits only. */
export function taxIdDigits(cpfCnpj: string): string {
  return cpfCnpj.replace(/\D/g, '');
}

/** Inter's x-conta-corrente: digits with the check digit, no leading zeros. */
export function sameAccount(header: string, account: string): boolean {
  return /^[1-9][0-9]*$/.test(header) && header === account.replace(/^0+/, '');
}
