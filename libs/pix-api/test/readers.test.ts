import {
  PIX_DIALECTS,
  PixAnswerError,
  readCobv,
  readPixNotice,
  readProblem,
  readReceived,
  readReceivedPage,
  readRefund,
  readWebhook,
} from '../src';
import { example } from './document';

const { standard, inter } = PIX_DIALECTS;

function answerError(read: () => unknown): PixAnswerError {
  try {
    read();
  } catch (error) {
    if (error instanceof PixAnswerError) return error;
    throw error;
  }
  throw new Error('read without error');
}

describe("readers, on the document's own examples", () => {
  it('reads a cobv (cobResponse4, the answer of PUT, GET and PATCH /cobv/{txid})', () => {
    const cobv = readCobv(example('cobResponse4'), standard);
    expect(cobv).toEqual({
      txid: '7978c0c97ea847e78e8849634473c1f1',
      status: 'ATIVA',
      revision: 0,
      createdAt: new Date('2020-09-09T20:15:00.358Z'),
      dueDate: '2020-12-31',
      daysPayableAfterDue: 30,
      amountCents: 12345,
      pixCopiaECola: null,
      location: 'pix.example.com/qr/c2/cobv/9d36b84fc70b478fb95c12729b90ca25',
      payments: [],
      refunds: [],
    });
  });

  it('reads a paid cobv with its PIX and devoluções, tolerating fields it does not know', () => {
    const paid = {
      ...(example('cobResponse4') as object),
      status: 'CONCLUIDA',
      pixCopiaECola: '00020101021226...6304ABCD',
      campoDoBanco: { qualquer: 'coisa' },
      pix: [example('pixResponse1')],
    };
    const cobv = readCobv(paid, inter);
    expect(cobv.status).toBe('CONCLUIDA');
    expect(cobv.pixCopiaECola).toBe('00020101021226...6304ABCD');
    expect(cobv.payments).toEqual([
      {
        endToEndId: 'E12345678202009091221abcdef12345',
        txid: 'cd1fe328c875481285a6f233ae41b662',
        amountCents: 10000,
        at: new Date('2020-09-10T13:03:33.902Z'),
        payerMessage: 'Reforma da casa',
        refunds: [
          {
            id: '000AAA111',
            rtrId: 'D12345678202009091000abcde123456',
            amountCents: 1100,
            status: 'EM_PROCESSAMENTO',
            requestedAt: new Date('2020-09-10T13:03:33.902Z'),
            at: null,
          },
        ],
      },
    ]);
    expect(cobv.refunds.map((r) => [r.endToEndId, r.id])).toEqual([['E12345678202009091221abcdef12345', '000AAA111']]);
  });

  it('reads a page of received PIX (getPix1)', () => {
    const page = readReceivedPage(example('getPix1'), standard);
    expect(page.page).toBe(0);
    expect(page.pages).toBe(1);
    expect(page.items.map((pix) => [pix.endToEndId, pix.txid, pix.amountCents])).toEqual([
      ['E12345678202009091221abcdef12345', 'cd1fe328c875481285a6f233ae41b662', 10000],
      ['E12345678202009091221ghijk789012', '5b933948f3224266b1050ac54319e775', 20000],
      ['E88631478202009091221ghijk789012', '82433415910c47e5adb6ac3527cca160', 20000],
    ]);
  });

  it('reads a received PIX whose txid is shorter than a charge txid (a static QR code)', () => {
    const pix = { ...(example('pixResponse2') as object), txid: 'LOJA123' };
    expect(readReceived(pix).txid).toBe('LOJA123');
  });

  it('reads the webhook notices (pixWebhook1, pixWebhook2), wrapped or as a bare list', () => {
    const items = [example('pixWebhook1'), example('pixWebhook2')];
    const wrapped = readPixNotice({ pix: items });
    expect(readPixNotice(items)).toEqual(wrapped);
    expect(wrapped.map((pix) => [pix.endToEndId, pix.amountCents, pix.refunds.length])).toEqual([
      ['E12345678202009091221kkkkkkkkkkk', 11000, 1],
      ['E87654321202009091221dfghi123456', 11000, 0],
    ]);
  });

  it('reads devoluções (devolucaoResponse1, devolucaoResponse2), settled or not', () => {
    expect(readRefund(example('devolucaoResponse1'))).toEqual({
      id: '123456',
      rtrId: 'D12345678202009091000abcde123456',
      amountCents: 789,
      status: 'EM_PROCESSAMENTO',
      requestedAt: new Date('2020-09-11T15:25:59.411Z'),
      at: null,
    });
    expect(readRefund(example('devolucaoResponse2')).status).toBe('NAO_REALIZADO');
    const settled = {
      ...(example('devolucaoResponse1') as object),
      status: 'DEVOLVIDO',
      horario: { liquidacao: '2020-09-11T15:26:00Z' },
    };
    expect(readRefund(settled).at).toEqual(new Date('2020-09-11T15:26:00Z'));
  });

  it('reads the webhook (webhookResponse1) and the problem answers', () => {
    expect(readWebhook(example('webhookResponse1'))).toEqual({ webhookUrl: 'https://pix.example.com/api/webhook/' });
    expect(readProblem(example('RequisicaoInvalidaCobVExample1'))).toEqual({
      type: 'https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida',
      title: 'Cobrança inválida.',
      status: 400,
      detail:
        'A requisição que busca alterar ou criar uma cobrança com vencimento não respeita o _schema_ ou está semanticamente errada.',
      violations: [{ reason: 'O objeto cobv.devedor não respeita o _schema_.', property: 'cobv.devedor', value: null }],
    });
    expect(readProblem({ message: 'not a problem' })).toBeNull();
  });
});

describe('readers, on answers that are not the standard shape', () => {
  it('names the missing field', () => {
    const { txid: _txid, ...withoutTxid } = example('cobResponse4') as Record<string, unknown>;
    const error = answerError(() => readCobv(withoutTxid, standard));
    expect(error.field).toBe('/txid');
    expect(error.message).toContain('/txid');
  });

  it('names an amount in the wrong shape', () => {
    const cobv = example('cobResponse4') as { valor: { original: string } };
    const error = answerError(() => readCobv({ ...cobv, valor: { original: '567,89' } }, standard));
    expect(error.field).toBe('/valor/original');
  });

  it('names the wrong item of a notice', () => {
    const bad = { ...(example('pixWebhook2') as object), valor: 110 };
    const error = answerError(() => readPixNotice({ pix: [example('pixWebhook1'), bad] }));
    expect(error.field).toBe('/pix/1/valor');
    expect(() => readPixNotice({ pix: 'x' })).toThrow(PixAnswerError);
  });

  it('refuses a page without its paging', () => {
    expect(answerError(() => readReceivedPage({ pix: [] }, standard)).field).toBe('/parametros');
  });
});
