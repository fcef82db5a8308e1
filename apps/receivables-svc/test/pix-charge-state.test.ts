import type { CobvView, ReceivedPix } from '@payments/pix-api';
import { chargeState } from '../src/transport/providers/pix';

/*
 * What a consulted cobv confirms: a notice is never proof, so a devolução told by the bank's webhook is
 * written only when the consult shows it under the payment it returns.
 */
const paidAt = new Date('2026-11-20T13:45:10.000Z');
const payment = (endToEndId: string, refunds: ReceivedPix['refunds'] = []): ReceivedPix => ({
  endToEndId,
  txid: 'rcv0123456789abcdef0123456789abcdef',
  amountCents: 10_530,
  at: paidAt,
  payerMessage: null,
  refunds,
});

function concluded(payments: ReceivedPix[]): CobvView {
  return {
    txid: 'rcv0123456789abcdef0123456789abcdef',
    status: 'CONCLUIDA',
    revision: 0,
    createdAt: new Date('2026-11-01T12:00:00.000Z'),
    dueDate: '2026-11-10',
    daysPayableAfterDue: 60,
    amountCents: 10_000,
    pixCopiaECola: null,
    location: null,
    payments,
    refunds: payments.flatMap((p) => p.refunds.map((r) => ({ ...r, endToEndId: p.endToEndId }))),
  };
}

describe('chargeState of a cobv', () => {
  it('gives the payment as the bank reports it, with the devoluções of that payment', () => {
    const returned = {
      id: 'D1',
      rtrId: 'D00000000202611201400abcdefghijk',
      amountCents: 2_000,
      status: 'DEVOLVIDO' as const,
      requestedAt: new Date('2026-11-20T14:00:00.000Z'),
      at: new Date('2026-11-20T14:00:05.000Z'),
    };
    const pending = { ...returned, id: 'D2', amountCents: 500, status: 'EM_PROCESSAMENTO' as const, at: null };
    const state = chargeState(concluded([payment('E1', [returned, pending])]));
    expect(state).toEqual({
      kind: 'paid',
      payment: { paidAt, paidAtPrecision: 'time', amountPaidCents: 10_530, feeCents: 0, method: 'pix' },
      refunds: [
        { id: 'D1', amountCents: 2_000, status: 'DEVOLVIDO', at: returned.at, inProcess: false },
        { id: 'D2', amountCents: 500, status: 'EM_PROCESSAMENTO', at: returned.requestedAt, inProcess: true },
      ],
    });
  });

  it('shows no devolução when the payment has none', () => {
    const state = chargeState(concluded([payment('E1')]));
    expect(state.kind === 'paid' ? state.refunds : 'not paid').toEqual([]);
  });
});
