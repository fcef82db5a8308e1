import { randomUUID } from 'node:crypto';
import {
  CancelResponseSchema,
  compileValidator,
  PaymentTypeLabels,
  ReceivablesCreateResponseSchema,
  receivableItemRuleErrors,
  StateLabels,
  validateReceivablesBatch,
  type FieldError,
} from '../src';

const item = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  url_callback: 'https://erp.example.com/callbacks/receivables',
  client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  payment_slip_id: '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a',
  // Each item its own charge: an id twice in a batch is an error of its own.
  account_receivable_id: randomUUID(),
  payment_method: 1,
  items: [{ description: 'Mensalidade', quantity: 1, price: 150.5 }],
  due_date: '2026-12-10',
  emission_date: '2026-11-23',
  value: 150.5,
  discount_type: 'NaoTemDesconto',
  ...over,
});

const withDiscount = (over: Record<string, unknown> = {}) =>
  item({ discount_type: 'ValorFixoAteDataInformada', discount_date: '2026-12-05', discount_value: 10, ...over });

function errorsOf(input: unknown): FieldError[] {
  const result = validateReceivablesBatch(input);
  if (result.ok) throw new Error(`expected errors, got ok for ${JSON.stringify(input)}`);
  return result.errors;
}
const paths = (input: unknown) => errorsOf(input).map((e) => e.path);

describe('receivables create batch', () => {
  it('accepts a valid item and fills the defaults', () => {
    const result = validateReceivablesBatch([item()]);
    expect(result).toEqual({
      ok: true,
      value: [expect.objectContaining({ fine_value: 0, interest_amount: 0, value: 150.5 })],
    });
  });

  it('accepts a PIX item with a fixed discount, no line items, and large 2-decimal values', () => {
    expect(validateReceivablesBatch([withDiscount({ payment_method: 3, items: undefined })]).ok).toBe(true);
    expect(validateReceivablesBatch([item({ value: 9_999_999_999.99 })]).ok).toBe(true);
    expect(validateReceivablesBatch([item({ value: 1_234_567_890.12 })]).ok).toBe(true);
    expect(validateReceivablesBatch([item({ value: 0.29, items: [] })]).ok).toBe(true);
  });

  it('names both items of an account_receivable_id sent twice, in any letter case, and each other item once', () => {
    const id = '3a2b1c0d-9e8f-4a6b-8c4d-3e2f1a0b9c8d';
    const other = { account_receivable_id: '5c4d3e2f-1a0b-4c8d-9e7f-6a5b4c3d2e1f' };
    const errors = errorsOf([
      item({ account_receivable_id: id }),
      item(other),
      item({ account_receivable_id: id.toUpperCase() }),
    ]);
    expect(errors).toEqual([
      { path: '/0/account_receivable_id', message: expect.stringContaining('items 0, 2') },
      { path: '/2/account_receivable_id', message: expect.stringContaining('items 0, 2') },
    ]);
    expect(validateReceivablesBatch([item({ account_receivable_id: id }), item(other)]).ok).toBe(true);
  });

  it('reports every missing required field by path', () => {
    const bare = {};
    expect(paths([bare]).sort()).toEqual(
      [
        'url_callback',
        'client_id',
        'payment_slip_id',
        'account_receivable_id',
        'payment_method',
        'due_date',
        'emission_date',
        'value',
        'discount_type',
      ]
        .map((f) => `/0/${f}`)
        .sort(),
    );
    expect(errorsOf([bare]).every((e) => e.message === 'is required')).toBe(true);
  });

  it('rejects payment_method 2 with the allowed values', () => {
    expect(errorsOf([item({ payment_method: 2 })])).toEqual([
      { path: '/0/payment_method', message: 'must be one of 1, 3' },
    ]);
    expect(paths([item({ payment_method: '1' })])).toEqual(['/0/payment_method']);
  });

  it.each([[0], [-1], [10.005], [1e13], ['10.00'], [null]])('rejects value %p', (value) => {
    expect(paths([item({ value })])).toEqual(['/0/value']);
  });

  it('rejects a price with more than 2 decimals, a zero quantity and a blank description', () => {
    expect(paths([item({ items: [{ description: ' ', quantity: 0, price: 1.234 }] })]).sort()).toEqual([
      '/0/items/0/description',
      '/0/items/0/price',
      '/0/items/0/quantity',
    ]);
  });

  it('limits the line items to 100 and descriptions to 500 characters', () => {
    const line = { description: 'x', quantity: 1, price: 1 };
    expect(paths([item({ items: Array.from({ length: 101 }, () => line) })])).toEqual(['/0/items']);
    expect(validateReceivablesBatch([item({ items: Array.from({ length: 100 }, () => ({ ...line })) })]).ok).toBe(true);
    expect(paths([item({ items: [{ ...line, description: 'x'.repeat(501) }] })])).toEqual(['/0/items/0/description']);
  });

  it('rejects a non-http url_callback and one over 2,048 characters', () => {
    expect(paths([item({ url_callback: 'ftp://erp.example.com/cb' })])).toEqual(['/0/url_callback']);
    expect(paths([item({ url_callback: 'not a url' })])).toEqual(['/0/url_callback']);
    expect(paths([item({ url_callback: 'javascript:alert(1)' })])).toEqual(['/0/url_callback']);
    expect(paths([item({ url_callback: `https://erp.example.com/${'a'.repeat(2048)}` })])).toEqual(['/0/url_callback']);
    // Where it may point is the gateway's policy (apps/gateway/test/callback-urls.test.ts), not a shape.
    expect(validateReceivablesBatch([item({ url_callback: 'http://localhost:8080/cb?x=1' })]).ok).toBe(true);
  });

  it('runs the caller item rules first, in item order, one error per path', () => {
    const rule = (candidate: unknown, index: number) =>
      index === 1 ? [{ path: '/1/url_callback', message: 'told by the caller' }] : [];
    const result = validateReceivablesBatch([item(), item({ value: 1.001 }), item({ value: 1.001 })], rule);
    expect(result.ok ? [] : result.errors).toEqual([
      { path: '/1/url_callback', message: 'told by the caller' },
      { path: '/1/value', message: 'must have at most 2 decimals' },
      { path: '/2/value', message: 'must have at most 2 decimals' },
    ]);
  });

  it('rejects bad dates, discount types, fine and interest', () => {
    expect(paths([item({ due_date: '2026-02-30' })])).toEqual(['/0/due_date']);
    expect(paths([item({ emission_date: '23/11/2026' })])).toEqual(['/0/emission_date']);
    expect(paths([item({ discount_type: 'Percentual' })])).toEqual(['/0/discount_type']);
    expect(paths([item({ fine_value: 101 })])).toEqual(['/0/fine_value']);
    expect(paths([item({ interest_amount: -0.01 })])).toEqual(['/0/interest_amount']);
  });

  describe('discount rules', () => {
    it('requires discount_date and discount_value with ValorFixoAteDataInformada', () => {
      expect(errorsOf([withDiscount({ discount_date: undefined, discount_value: undefined })])).toEqual([
        { path: '/0/discount_date', message: 'is required when discount_type is ValorFixoAteDataInformada' },
        { path: '/0/discount_value', message: 'is required when discount_type is ValorFixoAteDataInformada' },
      ]);
      expect(paths([withDiscount({ discount_date: null })])).toEqual(['/0/discount_date']);
      expect(paths([withDiscount({ discount_value: null })])).toEqual(['/0/discount_value']);
    });

    it('requires discount_value < value', () => {
      expect(errorsOf([item(), withDiscount({ discount_value: 150.5 })])).toEqual([
        { path: '/1/discount_value', message: 'must be less than value' },
      ]);
      expect(paths([withDiscount({ discount_value: 200 })])).toEqual(['/0/discount_value']);
      expect(paths([withDiscount({ discount_value: 0 })])).toEqual(['/0/discount_value']);
    });

    it('requires discount_date <= due_date', () => {
      expect(validateReceivablesBatch([withDiscount({ discount_date: '2026-12-10' })]).ok).toBe(true);
      expect(errorsOf([item(), item(), item(), withDiscount({ discount_date: '2026-12-11' })])).toEqual([
        { path: '/3/discount_date', message: 'must not be after due_date' },
      ]);
    });

    it('rejects a discount_value with more than 2 decimals or negative', () => {
      expect(paths([withDiscount({ discount_value: 1.001 })])).toEqual(['/0/discount_value']);
      expect(paths([item({ discount_value: -1 })])).toEqual(['/0/discount_value']);
    });

    it('ignores discount fields when there is no discount', () => {
      expect(validateReceivablesBatch([item({ discount_date: null, discount_value: null })]).ok).toBe(true);
    });
  });

  it('removes unknown fields', () => {
    const input = [item({ extra: 'x', items: [{ description: 'a', quantity: 1, price: 1, sku: 'z' }] })];
    const result = validateReceivablesBatch(input);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value[0]).not.toHaveProperty('extra');
    expect(result.value[0].items?.[0]).not.toHaveProperty('sku');
  });

  it('reports two bad items in a batch with their indexes, in item order, schema and rule errors together', () => {
    const errors = errorsOf([
      item(),
      withDiscount({ discount_value: 500 }),
      item(),
      item({ value: 10.005, client_id: 'nope' }),
    ]);
    expect(errors.map((e) => e.path)).toEqual(['/1/discount_value', '/3/client_id', '/3/value']);
  });

  it('rejects an empty array and a body that is not an array', () => {
    expect(errorsOf([])).toEqual([{ path: '', message: expect.stringContaining('fewer than 1') }]);
    expect(paths({})).toEqual(['']);
    expect(paths([42])).toEqual(['/0']);
  });

  it('rule function is safe on malformed items', () => {
    expect(receivableItemRuleErrors(null, 0)).toEqual([]);
    expect(
      receivableItemRuleErrors(
        { discount_type: 'ValorFixoAteDataInformada', discount_value: 'x', discount_date: 5 },
        2,
      ),
    ).toEqual([]);
    expect(receivableItemRuleErrors({ value: 1.001 }, 7)).toEqual([
      { path: '/7/value', message: 'must have at most 2 decimals' },
    ]);
    expect(receivableItemRuleErrors({ url_callback: 'http://10.0.0.1/' }, 3)).toEqual([]);
  });
});

describe('responses and labels', () => {
  it('create and cancel responses', () => {
    expect(
      compileValidator(ReceivablesCreateResponseSchema)({
        status: 'success',
        message: 'Receivables are being processed',
        existing: ['3a2b1c0d-9e8f-4a6b-8c4d-3e2f1a0b9c8d'],
      }).ok,
    ).toBe(true);
    expect(compileValidator(CancelResponseSchema)({ status: 'success', message: 'Sent for cancellation' }).ok).toBe(
      true,
    );
    expect(compileValidator(CancelResponseSchema)({ status: 'error', message: 'x' }).ok).toBe(false);
  });

  it('labels are the Portuguese wire values', () => {
    expect(StateLabels).toEqual({
      pending: 'Pendente',
      approved: 'Aprovada',
      rejected: 'Rejeitada',
      cancelled: 'Cancelada',
    });
    expect(PaymentTypeLabels).toEqual({ undefined: 'naodefinido', boleto: 'Boleto', pix: 'Pix', manual: 'Manual' });
  });
});

describe('rules added for registration', () => {
  it('rejects interest and fine with more than 2 decimals, and a due date before the emission date', () => {
    const result = validateReceivablesBatch([
      { ...item(), interest_amount: 0.333, fine_value: 2.125, emission_date: '2026-12-10', due_date: '2026-12-01' },
    ]);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors.map((e) => e.path).sort()).toEqual(['/0/due_date', '/0/fine_value', '/0/interest_amount']);
  });
});
