import { paymentDay } from '../src/domain/booklet-contents';

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
