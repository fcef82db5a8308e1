import { formatReais, toCents } from '@payments/br-format';

export { formatTypeableLine } from '@payments/br-format';

/** "R$ 1.200,00" from an amount in reais as the API writes it. */
export function reais(value: number): string {
  return formatReais(toCents(value));
}

/** The start of a PIX copy-and-paste text, enough to recognise it. */
export function pixPrefix(text: string, length = 36): string {
  return text.length > length ? `${text.slice(0, length)}...` : text;
}

export function shortId(uuid: string): string {
  return uuid.slice(0, 8);
}
