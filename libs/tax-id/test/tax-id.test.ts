import { formatTaxId, isValidCnpj, isValidCpf, isValidTaxId, taxIdDigits, taxIdKind } from '../src';

// Independent check-digit arithmetic (Receita Federal's rules) to cross-check the library on many ids.
function cpfDigits(base9: string): string {
  const dv = (digits: string, start: number) => {
    const sum = [...digits].reduce((acc, d, i) => acc + Number(d) * (start - i), 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(base9, 10);
  const d2 = dv(base9 + d1, 11);
  return `${base9}${d1}${d2}`;
}
function cnpjDigits(base12: string): string {
  const value = (c: string) => c.charCodeAt(0) - 48; // '0'..'9' -> 0..9, 'A'..'Z' -> 17..42
  const dv = (chars: string) => {
    const weights =
      chars.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const sum = [...chars].reduce((acc, c, i) => acc + value(c) * weights[i], 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(base12);
  const d2 = dv(base12 + d1);
  return `${base12}${d1}${d2}`;
}

describe('CPF', () => {
  it('accepts valid CPFs with and without punctuation', () => {
    expect(isValidCpf('529.982.247-25')).toBe(true);
    expect(isValidCpf('52998224725')).toBe(true);
  });
  it('rejects a wrong check digit, repeated digits and misplaced punctuation', () => {
    expect(isValidCpf('529.982.247-24')).toBe(false);
    expect(isValidCpf('111.111.111-11')).toBe(false);
    expect(isValidCpf('529-982.247.25')).toBe(false);
    expect(isValidCpf('5299822472')).toBe(false);
  });
  it('agrees with independent arithmetic on generated ids', () => {
    for (let i = 0; i < 200; i++) {
      const base = String(100000000 + i * 4999123).slice(0, 9);
      const id = cpfDigits(base);
      if (/^(\d)\1+$/.test(id)) continue;
      expect(isValidCpf(id)).toBe(true);
      const wrong = id.slice(0, 10) + ((Number(id[10]) + 1) % 10);
      expect(isValidCpf(wrong)).toBe(false);
    }
  });
});

describe('CNPJ', () => {
  it('accepts numeric CNPJs with and without punctuation', () => {
    expect(isValidCnpj('11.222.333/0001-81')).toBe(true);
    expect(isValidCnpj('11222333000181')).toBe(true);
  });
  it('accepts the alphanumeric format (July 2026)', () => {
    expect(isValidCnpj('12.ABC.345/01DE-35')).toBe(true);
    expect(isValidCnpj('12ABC34501DE35')).toBe(true);
  });
  it('rejects wrong check digits and letters in the check-digit places', () => {
    expect(isValidCnpj('11.222.333/0001-82')).toBe(false);
    expect(isValidCnpj('12.ABC.345/01DE-36')).toBe(false);
    expect(isValidCnpj('12.ABC.345/01DE-3A')).toBe(false);
    expect(isValidCnpj('00.000.000/0000-00')).toBe(false);
  });
  it('agrees with independent arithmetic on generated alphanumeric ids', () => {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (let i = 0; i < 200; i++) {
      const base = Array.from({ length: 12 }, (_, j) => alphabet[(i * 7 + j * 13 + i * j) % alphabet.length]).join('');
      const id = cnpjDigits(base);
      if (/^(\d)\1+$/.test(id)) continue;
      expect(isValidCnpj(id)).toBe(true);
      const wrong = id.slice(0, 13) + ((Number(id[13]) + 1) % 10);
      expect(isValidCnpj(wrong)).toBe(false);
    }
  });
});

describe('any tax id', () => {
  it('tells CPF from CNPJ and validates either', () => {
    expect(taxIdKind('529.982.247-25')).toBe('cpf');
    expect(taxIdKind('12.ABC.345/01DE-35')).toBe('cnpj');
    expect(taxIdKind('123')).toBeNull();
    expect(isValidTaxId('529.982.247-25')).toBe(true);
    expect(isValidTaxId('11.222.333/0001-81')).toBe(true);
    expect(isValidTaxId('not an id')).toBe(false);
  });
  it('normalises to bare upper-case characters', () => {
    expect(taxIdDigits('12.abc.345/01de-35')).toBe('12ABC34501DE35');
  });
});

describe('formatTaxId', () => {
  it('punctuates a CPF and a CNPJ, bare or already punctuated, numeric or alphanumeric', () => {
    expect(formatTaxId('52998224725')).toBe('529.982.247-25');
    expect(formatTaxId('529.982.247-25')).toBe('529.982.247-25');
    expect(formatTaxId('11222333000181')).toBe('11.222.333/0001-81');
    expect(formatTaxId('12.abc.345/01de-35')).toBe('12.ABC.345/01DE-35');
  });
  it('gives anything else back as it came', () => {
    expect(formatTaxId('123')).toBe('123');
    expect(formatTaxId('not a tax id')).toBe('not a tax id');
  });
});
