import { createHmac } from 'node:crypto';
import { slipInstructions } from '../src/domain/registration';
import { Webhook } from 'standardwebhooks';
import {
  InvalidWebhookError,
  sandboxWebhookVerifier,
  verifySandboxWebhook,
} from '../src/transport/providers/bank-sandbox-webhook';

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

describe('bank sandbox webhook (Standard Webhooks)', () => {
  const secret = 'sandbox-webhook-secret';
  const verifier = sandboxWebhookVerifier(secret);
  const body = JSON.stringify({
    event: 'charge.paid',
    charge_id: 'c1',
    our_number: '00000000001',
    paid_at: '2026-11-23T12:00:00.000Z',
    amount_paid_cents: 15075,
    fee_cents: 199,
    method: 'boleto',
  });
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  /** Signed here with node:crypto alone, as the scheme says: HMAC-SHA256 of "id.timestamp.body". */
  const signed = (raw: string, id: string, opts: { at?: number; key?: string | Buffer } = {}) => {
    const timestamp = String(opts.at ?? nowSeconds());
    const mac = createHmac('sha256', opts.key ?? secret)
      .update(`${id}.${timestamp}.${raw}`)
      .digest('base64');
    return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
  };

  it('accepts a correctly signed payment and reads it in cents; a legacy charge has no account reference', () => {
    expect(verifySandboxWebhook(verifier, body, signed(body, 'e1'))).toEqual({
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

  it('decodes a whsec_ secret as the standard says (what the reference library signs verifies)', () => {
    const standard = 'whsec_' + Buffer.alloc(24, 5).toString('base64');
    const at = new Date();
    const headers = {
      'webhook-id': 'e5',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(standard).sign('e5', at, body),
    };
    expect(verifySandboxWebhook(sandboxWebhookVerifier(standard), body, headers)?.payment.eventId).toBe(
      'bank-sandbox:e5',
    );
    expect(signed(body, 'e5', { key: Buffer.alloc(24, 5) })['webhook-signature'].split(',')[1]).toBe(
      headers['webhook-signature'].split(',')[1],
    );
    expect(() => verifySandboxWebhook(verifier, body, headers)).toThrow('bad signature');
  });

  it('accepts one of several signatures (a rotation), as Standard Webhooks allows', () => {
    const good = signed(body, 'e6');
    const other = signed(body, 'e6', { key: 'other' })['webhook-signature'];
    expect(
      verifySandboxWebhook(verifier, body, { ...good, 'webhook-signature': `${other} ${good['webhook-signature']}` }),
    ).not.toBeNull();
  });

  it('reads the account the charge was registered under, and refuses one that is not a string', () => {
    const withAccount = JSON.stringify({
      ...JSON.parse(body),
      account_reference: 'a5d7c7e2-0000-4000-8000-000000000001',
    });
    expect(verifySandboxWebhook(verifier, withAccount, signed(withAccount, 'e3'))?.accountReference).toBe(
      'a5d7c7e2-0000-4000-8000-000000000001',
    );
    const bad = JSON.stringify({ ...JSON.parse(body), account_reference: 42 });
    expect(() => verifySandboxWebhook(verifier, bad, signed(bad, 'e4'))).toThrow(/incomplete/);
  });

  it('refuses a wrong secret, a tampered body or id, missing headers and an incomplete payment', () => {
    const headers = signed(body, 'e1');
    const refused = (raw: string, h: Record<string, string | string[] | undefined>) => () =>
      verifySandboxWebhook(verifier, raw, h);
    expect(refused(body, signed(body, 'e1', { key: 'other' }))).toThrow(new InvalidWebhookError('bad signature'));
    expect(refused(body.replace('15075', '1'), headers)).toThrow('bad signature');
    expect(refused(body, { ...headers, 'webhook-id': 'e2' })).toThrow('bad signature');
    expect(refused(body, { ...headers, 'webhook-signature': 'v2,' + headers['webhook-signature'].slice(3) })).toThrow(
      'bad signature',
    );
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const)
      expect(refused(body, { ...headers, [name]: undefined })).toThrow(/missing/);
    expect(refused(body, { ...headers, 'webhook-id': ['e1', 'e1'] })).toThrow(/missing/);
    expect(refused('not json', signed('not json', 'e1'))).toThrow(/not JSON/);
    const partial = JSON.stringify({ event: 'charge.paid', charge_id: 'c1' });
    expect(refused(partial, signed(partial, 'e1'))).toThrow(/incomplete/);
  });

  it('refuses a timestamp more than 5 minutes old or ahead, or not a number; 5 minutes old still passes', () => {
    const at = (offsetSeconds: number) => signed(body, 'e7', { at: nowSeconds() + offsetSeconds });
    expect(() => verifySandboxWebhook(verifier, body, at(-6 * 60))).toThrow(/more than 5 minutes old/);
    expect(() => verifySandboxWebhook(verifier, body, at(6 * 60))).toThrow(/more than 5 minutes ahead/);
    expect(verifySandboxWebhook(verifier, body, at(-5 * 60 + 2))).not.toBeNull();
    expect(verifySandboxWebhook(verifier, body, at(5 * 60 - 2))).not.toBeNull();
    const stamped = (timestamp: string) => ({ ...signed(body, 'e7'), 'webhook-timestamp': timestamp });
    const mac = (timestamp: string) => createHmac('sha256', secret).update(`e7.${timestamp}.${body}`).digest('base64');
    for (const odd of [`${nowSeconds()}abc`, '1.8e9', ''])
      expect(() =>
        verifySandboxWebhook(verifier, body, { ...stamped(odd), 'webhook-signature': `v1,${mac(odd)}` }),
      ).toThrow(InvalidWebhookError);
  });

  it('ignores other events', () => {
    const other = JSON.stringify({ event: 'charge.viewed', charge_id: 'c1' });
    expect(verifySandboxWebhook(verifier, other, signed(other, 'e2'))).toBeNull();
  });
});
