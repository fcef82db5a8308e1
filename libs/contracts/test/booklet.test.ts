import { BookletRequestSchema, BookletResponseSchema, compileValidator } from '../src';

const validateRequest = compileValidator(BookletRequestSchema);

describe('booklet', () => {
  it('accepts an http or https url_callback and drops unknown fields', () => {
    const body = { url_callback: 'https://erp.example.com/booklets', binary: true };
    expect(validateRequest(body)).toEqual({ ok: true, value: { url_callback: 'https://erp.example.com/booklets' } });
    expect(validateRequest({ url_callback: 'http://10.0.0.5:8080/cb' }).ok).toBe(true);
  });

  it.each([['ftp://erp.example.com/cb'], ['mailto:erp@example.com'], ['erp.example.com/cb'], [''], [42]])(
    'rejects url_callback %p',
    (url_callback) => {
      const r = validateRequest({ url_callback });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors.map((e) => e.path)).toEqual(['/url_callback']);
      if (!r.ok && typeof url_callback === 'string' && url_callback !== '')
        expect(r.errors[0].message).toMatch(/http or https URL/);
    },
  );

  it('requires url_callback', () => {
    expect(validateRequest({})).toEqual({ ok: false, errors: [{ path: '/url_callback', message: 'is required' }] });
  });

  it('preparing response', () => {
    const validate = compileValidator(BookletResponseSchema);
    expect(
      validate({
        success: true,
        type: 'preparing',
        message: 'Booklet is being prepared',
        payment_slip_id: '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a',
      }).ok,
    ).toBe(true);
    expect(
      validate({ success: true, type: 'sent', message: 'x', payment_slip_id: '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a' })
        .ok,
    ).toBe(false);
  });
});
