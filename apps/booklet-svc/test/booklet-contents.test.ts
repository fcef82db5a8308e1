import type { InstallmentView } from '@payments/contracts';
import { bookletDocument, paymentDay } from '../src/domain/booklet-contents';

describe('paymentDay', () => {
  it('takes the date of a zoneless payment_date (the spec writes local time)', () => {
    expect(paymentDay('2026-12-05T23:59:59.999')).toBe('2026-12-05');
    expect(paymentDay('2026-12-05')).toBe('2026-12-05');
  });

  it('reads a zoned payment_date in Brasília time', () => {
    expect(paymentDay('2026-12-06T01:30:00.000Z')).toBe('2026-12-05');
    expect(paymentDay('2026-12-05T22:30:00-03:00')).toBe('2026-12-05');
    expect(paymentDay('2026-12-05T12:00:00+00:00')).toBe('2026-12-05');
  });

  it('gives null for what is not a date', () => {
    expect(paymentDay('yesterday')).toBeNull();
    expect(paymentDay('2026-13-45T00:00:00Z')).toBeNull();
  });
});

describe('bookletDocument', () => {
  const installment = (over: Partial<InstallmentView>): InstallmentView => ({
    account_receivable_id: 'r-1',
    due_date: '2026-12-10',
    amount_cents: 10_000,
    instructions: [],
    state: 'pending',
    payment_date: null,
    registered: true,
    our_number: '1',
    typeable_line: null,
    barcode: null,
    pix_copy_and_paste: null,
    payer: {
      name: 'Payer',
      cnpj_cpf: '11144477735',
      address: null,
      number: null,
      neighborhood: null,
      city: null,
      state: null,
      zip_code: null,
    },
    ...over,
  });
  const payee = { name: 'Payee', taxId: '11222333000181', address: [] };

  it('prints a PIX charge whose line and barcode came empty as PIX only, and a slip with its barcode', () => {
    const doc = bookletDocument('slip-1', payee, [
      installment({ typeable_line: '', barcode: '', pix_copy_and_paste: '000201...6304ABCD', our_number: 'rcv1' }),
      installment({ account_receivable_id: 'r-2', typeable_line: '1'.repeat(47), barcode: '2'.repeat(44) }),
    ]);
    expect(doc.installments[0]).toMatchObject({
      typeableLine: null,
      barcode: null,
      pixCopyAndPaste: '000201...6304ABCD',
    });
    expect(doc.installments[1]).toMatchObject({ typeableLine: '1'.repeat(47), barcode: '2'.repeat(44) });
  });
});
