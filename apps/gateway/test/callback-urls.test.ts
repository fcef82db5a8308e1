import { randomUUID } from 'node:crypto';
import { callbackUrlPolicy, validateBooklet, validateCreateBatch } from '../src/transport/http/callback-urls';

// Where a url_callback may point, judged at the gateway's intake; the expected messages are written
// out here, not taken from libs/url-safety.
const item = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  url_callback: 'https://erp.example.com/callbacks/receivables',
  client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60',
  payment_slip_id: '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a',
  account_receivable_id: randomUUID(),
  payment_method: 1,
  items: [{ description: 'Mensalidade', quantity: 1, price: 150.5 }],
  due_date: '2026-12-10',
  emission_date: '2026-11-23',
  value: 150.5,
  discount_type: 'NaoTemDesconto',
  ...over,
});

const errorsOf = (batch: unknown[]) => {
  const result = validateCreateBatch(batch, 'public-only');
  return result.ok ? [] : result.errors;
};

describe('a create batch in production (public-only)', () => {
  it.each([
    ['http://[fec0::1]/cb', 'deprecatedSiteLocal'],
    ['http://[100::1]/cb', 'discard'],
    ['http://[::127.0.0.1]/cb', 'loopback'],
    ['http://10.0.0.1:8080/cb', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
  ])('refuses %s on the field path, with the rest of the batch', (url, range) => {
    expect(errorsOf([item(), item({ url_callback: url, value: 1.001 })])).toEqual([
      {
        path: '/1/url_callback',
        message: `must not point to a ${range} address; callbacks go only to public addresses`,
      },
      { path: '/1/value', message: 'must have at most 2 decimals' },
    ]);
  });

  it.each(['http://localhost:8080/cb', 'https://hooks.localhost/cb'])('refuses %s', (url) => {
    expect(errorsOf([item({ url_callback: url })])).toEqual([
      { path: '/0/url_callback', message: 'must not point to localhost' },
    ]);
  });

  it('accepts public addresses and names, and gives a URL the schema refused one error only', () => {
    for (const url of ['http://8.8.8.8/cb', 'https://[2001:4860:4860::8888]/cb', 'https://erp.example.com/cb'])
      expect(errorsOf([item({ url_callback: url })])).toEqual([]);
    expect(errorsOf([item({ url_callback: 'ftp://10.0.0.1/cb' })]).map((e) => e.path)).toEqual(['/0/url_callback']);
    expect(errorsOf([item({ url_callback: 42 })]).map((e) => e.path)).toEqual(['/0/url_callback']);
  });
});

describe('a create batch in development (allow-private)', () => {
  it('takes receivers on private addresses and localhost', () => {
    for (const url of ['http://127.0.0.1:9000/cb', 'http://[fec0::1]/cb', 'http://localhost/cb'])
      expect(validateCreateBatch([item({ url_callback: url })], 'allow-private').ok).toBe(true);
  });
});

describe('a booklet request', () => {
  it.each([
    ['http://10.0.0.5:8080/cb', 'must not point to a private address; callbacks go only to public addresses'],
    ['http://[::127.0.0.1]/cb', 'must not point to a loopback address; callbacks go only to public addresses'],
    ['http://[fec0::1]/cb', 'must not point to a deprecatedSiteLocal address; callbacks go only to public addresses'],
    ['http://a.localhost/cb', 'must not point to localhost'],
  ])('refuses %s in production on /url_callback', (url_callback, message) => {
    expect(validateBooklet({ url_callback }, 'public-only')).toEqual({
      ok: false,
      errors: [{ path: '/url_callback', message }],
    });
    expect(validateBooklet({ url_callback }, 'allow-private')).toEqual({ ok: true, value: { url_callback } });
  });

  it('accepts a public one and reports schema errors first', () => {
    expect(validateBooklet({ url_callback: 'https://8.8.8.8/cb', extra: 1 }, 'public-only')).toEqual({
      ok: true,
      value: { url_callback: 'https://8.8.8.8/cb' },
    });
    expect(validateBooklet({}, 'public-only')).toEqual({
      ok: false,
      errors: [{ path: '/url_callback', message: 'is required' }],
    });
  });
});

it('maps the run mode to the policy', () => {
  expect(callbackUrlPolicy('production')).toBe('public-only');
  expect(callbackUrlPolicy('development')).toBe('allow-private');
});
