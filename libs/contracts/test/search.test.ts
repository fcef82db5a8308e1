import { compileValidator, ConsultResultSchema, SearchResponseSchema, validateSearchRequest } from '../src';

const request = (over: Record<string, unknown> = {}) => ({
  state: 'all',
  start_date: '2026-11-01',
  end_date: '2026-11-30',
  ...over,
});
const paths = (input: unknown) => {
  const r = validateSearchRequest(input);
  return r.ok ? [] : r.errors.map((e) => e.path);
};

describe('search request', () => {
  it('accepts every filter value and fills the default limit', () => {
    for (const state of ['all', 'pending', 'approved', 'rejected', 'cancelled']) {
      expect(validateSearchRequest(request({ state }))).toEqual({
        ok: true,
        value: { ...request({ state }), limit: 500 },
      });
    }
    expect(validateSearchRequest(request({ start_date: '2026-11-30', limit: 5000, cursor: 'abc' })).ok).toBe(true);
  });

  it('rejects a bad state', () => {
    const r = validateSearchRequest(request({ state: 'paid' }));
    expect(r).toEqual({ ok: false, errors: [{ path: '/state', message: expect.stringContaining('"pending"') }] });
  });

  it('rejects reversed dates at /end_date', () => {
    expect(validateSearchRequest(request({ start_date: '2026-12-01' }))).toEqual({
      ok: false,
      errors: [{ path: '/end_date', message: 'must not be before start_date' }],
    });
  });

  it('rejects missing and malformed dates', () => {
    expect(paths({ state: 'all' })).toEqual(['/start_date', '/end_date']);
    expect(paths(request({ end_date: '2026-11-31' }))).toEqual(['/end_date']);
  });

  it.each([[0], [5001], [1.5], ['10'], [-1]])('rejects limit %p', (limit) => {
    expect(paths(request({ limit }))).toEqual(['/limit']);
  });

  it('rejects an over-long cursor and a non-object body', () => {
    expect(paths(request({ cursor: 'x'.repeat(513) }))).toEqual(['/cursor']);
    expect(paths([])).toEqual(['']);
  });
});

describe('search and consult results', () => {
  const summary = {
    accounts_receivable_id: '3a2b1c0d-9e8f-4a6b-8c4d-3e2f1a0b9c8d',
    client_name: 'ACME Ltda',
    status_payment: 'Aprovada',
    payment_date: '2026-11-23T14:05:09.123',
    amount_due: 150.5,
    amount_paid: 150.5,
    fee_amount: 1.99,
  };
  const search = compileValidator(SearchResponseSchema);
  const consult = compileValidator(ConsultResultSchema);

  it('search uses paymento_type, consult payment_type', () => {
    expect(
      search([
        { ...summary, paymento_type: 'Manual' },
        { ...summary, status_payment: 'Pendente', paymento_type: 'naodefinido', payment_date: null },
      ]).ok,
    ).toBe(true);
    expect(search([]).ok).toBe(true);
    expect(search([{ ...summary, payment_type: 'Manual' }])).toEqual({
      ok: false,
      errors: [{ path: '/0/paymento_type', message: 'is required' }],
    });
    expect(consult({ ...summary, payment_type: 'Pix' }).ok).toBe(true);
    expect(consult({ ...summary, paymento_type: 'Pix' }).ok).toBe(false);
  });

  it('payment_date is an ISO date-time with fractional seconds and no zone', () => {
    for (const bad of [
      '2026-11-23T14:05:09',
      '2026-11-23T14:05:09.123Z',
      '2026-11-23 14:05:09.123',
      '2026-11-23T14:05:09.123-03:00',
    ]) {
      expect(consult({ ...summary, payment_type: 'Pix', payment_date: bad }).ok).toBe(false);
    }
  });

  it('rejects unknown labels', () => {
    expect(consult({ ...summary, payment_type: 'Pix', status_payment: 'approved' }).ok).toBe(false);
    expect(consult({ ...summary, payment_type: 'pix' }).ok).toBe(false);
  });
});
