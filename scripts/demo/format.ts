const BRL = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });

/** R$ 1.200,00 (with a plain space). */
export function reais(value: number): string {
  return BRL.format(value).replace(/\s/g, ' ');
}

/** A 47-digit typeable line as printed on a slip: AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE. */
export function formatTypeableLine(line: string): string {
  const m = /^(\d{5})(\d{5})(\d{5})(\d{6})(\d{5})(\d{6})(\d)(\d{14})$/.exec(line);
  return m ? `${m[1]}.${m[2]} ${m[3]}.${m[4]} ${m[5]}.${m[6]} ${m[7]} ${m[8]}` : line;
}

/** The start of a PIX copy-and-paste text, enough to recognise it. */
export function pixPrefix(text: string, length = 36): string {
  return text.length > length ? `${text.slice(0, length)}...` : text;
}

export function shortId(uuid: string): string {
  return uuid.slice(0, 8);
}
