import { planRegistration } from '../src/domain/behaviour';
import { paymentAmountCents, sandboxFeeCents } from '../src/domain/money';
import { instructionLines } from '../src/domain/slip-text';

describe('sandbox tariff', () => {
  it('charges R$ 1.99 per slip, 0.99 % per PIX rounded half-up to the cent, nothing for manual', () => {
    expect(sandboxFeeCents('boleto', 12_345)).toBe(199);
    expect(sandboxFeeCents('manual', 12_345)).toBe(0);
    expect(sandboxFeeCents('pix', 10_000)).toBe(99); // R$ 100.00 -> R$ 0.99
    expect(sandboxFeeCents('pix', 5_000)).toBe(50); // 49.5 cents -> 50 (half up)
    expect(sandboxFeeCents('pix', 150)).toBe(1); // 1.485 cents -> 1
    expect(sandboxFeeCents('pix', 12_345)).toBe(122); // 122.2155 -> 122
    expect(sandboxFeeCents('pix', 999_999_999_999)).toBe(9_900_000_000); // 9,899,999,999.99 -> exact integers all the way
  });
});

describe('amounts in reais', () => {
  it('takes at most 2 decimals, at any magnitude', () => {
    expect(paymentAmountCents(12.34)).toBe(1234);
    expect(paymentAmountCents(100.5)).toBe(10050);
    expect(paymentAmountCents(0.01)).toBe(1);
    expect(paymentAmountCents(9_999_999_999.99)).toBe(999_999_999_999);
    expect(paymentAmountCents(12.345)).toBeNull();
    expect(paymentAmountCents(0.1 + 0.2)).toBeNull();
    expect(paymentAmountCents(0)).toBeNull();
    expect(paymentAmountCents(-1)).toBeNull();
  });

  it("writes discount, fine and interest instructions before the payee's own", () => {
    expect(
      instructionLines({
        discount: { amountCents: 500, until: '2025-07-05' },
        finePercentBp: 200,
        interestPerDayCents: 4,
        instructions: ['Não receber após 30 dias'],
      }),
    ).toEqual([
      'Conceder desconto de R$ 5,00 para pagamento até 05/07/2025.',
      'Após o vencimento, cobrar multa de 2,00%.',
      'Após o vencimento, cobrar juros de R$ 0,04 por dia de atraso.',
      'Não receber após 30 dias',
    ]);
    expect(instructionLines({ discount: null, finePercentBp: 0, interestPerDayCents: 0, instructions: [] })).toEqual(
      [],
    );
  });
});

describe('registration behaviour', () => {
  it('follows the mode, and a marker in the payer name for one charge', () => {
    expect(planRegistration('normal', 'Ana')).toEqual({ outcome: 'accept', slow: false });
    expect(planRegistration('reject', 'Ana')).toEqual({ outcome: 'reject', slow: false });
    expect(planRegistration('slow', 'Ana')).toEqual({ outcome: 'accept', slow: true });
    expect(planRegistration('down', 'Ana')).toEqual({ outcome: 'fail', slow: false });
    expect(planRegistration('normal', 'Ana [sandbox:reject]')).toEqual({ outcome: 'reject', slow: false });
    expect(planRegistration('normal', 'Ana [Sandbox:Slow]')).toEqual({ outcome: 'accept', slow: true });
    expect(planRegistration('normal', '[sandbox:fail] Ana')).toEqual({ outcome: 'fail', slow: false });
  });
});
