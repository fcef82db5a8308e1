import { createHmac } from 'node:crypto';
import { slipInstructions } from '../src/domain/registration';
import { InvalidWebhookError, verifySandboxWebhook } from '../src/provider/bank-sandbox-webhook';

describe('slip instructions', () => {
  it('writes discount, fine and interest the way a Brazilian slip prints them', () => {
    expect(
      slipInstructions({
        discount_cents: 123456,
        discount_until: '2026-12-10',
        fine_bp: 250,
        interest_cents_per_day: 5,
      }),
    ).toEqual([
      'Até 10/12/2026, conceder desconto de R$ 1.234,56.',
      'Após o vencimento, cobrar multa de 2,50%.',
      'Após o vencimento, cobrar juros de R$ 0,05 por dia de atraso.',
    ]);
    expect(
      slipInstructions({ discount_cents: null, discount_until: null, fine_bp: 0, interest_cents_per_day: 0 }),
    ).toEqual([]);
  });
});

describe('bank sandbox webhook', () => {
  const secret = 'sandbox-webhook-secret';
  const body = JSON.stringify({
    event: 'charge.paid',
    charge_id: 'c1',
    our_number: '00000000001',
    paid_at: '2026-11-23T12:00:00.000Z',
    amount_paid_cents: 15075,
    fee_cents: 199,
    method: 'boleto',
  });
  const sign = (raw: string, key = secret) => `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;

  it('accepts a correctly signed payment and reads it in cents; a legacy charge has no account reference', () => {
    expect(verifySandboxWebhook(secret, body, sign(body), 'e1')).toEqual({
      payment: {
        eventId: 'bank-sandbox:e1',
        chargeId: 'c1',
        paidAt: new Date('2026-11-23T12:00:00.000Z'),
        amountPaidCents: 15075,
        feeCents: 199,
        method: 'boleto',
      },
      accountReference: null,
    });
  });

  it('reads the account the charge was registered under, and refuses one that is not a string', () => {
    const withAccount = JSON.stringify({
      ...JSON.parse(body),
      account_reference: 'a5d7c7e2-0000-4000-8000-000000000001',
    });
    expect(verifySandboxWebhook(secret, withAccount, sign(withAccount), 'e3')?.accountReference).toBe(
      'a5d7c7e2-0000-4000-8000-000000000001',
    );
    const bad = JSON.stringify({ ...JSON.parse(body), account_reference: 42 });
    expect(() => verifySandboxWebhook(secret, bad, sign(bad), 'e4')).toThrow(/incomplete/);
  });

  it('refuses a wrong secret, a tampered body, a missing signature and an incomplete payment', () => {
    expect(() => verifySandboxWebhook(secret, body, sign(body, 'other'), 'e1')).toThrow(InvalidWebhookError);
    expect(() => verifySandboxWebhook(secret, body.replace('15075', '1'), sign(body), 'e1')).toThrow(
      InvalidWebhookError,
    );
    expect(() => verifySandboxWebhook(secret, body, undefined, 'e1')).toThrow(InvalidWebhookError);
    const partial = JSON.stringify({ event: 'charge.paid', charge_id: 'c1' });
    expect(() => verifySandboxWebhook(secret, partial, sign(partial), 'e1')).toThrow(/incomplete/);
    expect(() => verifySandboxWebhook(secret, body, sign(body), undefined)).toThrow(/incomplete/);
  });

  it('ignores other events', () => {
    const other = JSON.stringify({ event: 'charge.viewed', charge_id: 'c1' });
    expect(verifySandboxWebhook(secret, other, sign(other), 'e2')).toBeNull();
  });
});
