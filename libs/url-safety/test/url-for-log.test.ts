import { checkCallbackUrl, urlForLog } from '../src';

describe('urlForLog', () => {
  it.each([
    ['https://erp.example.com/hooks/pay?token=s3cret&sig=abc#frag', 'https://erp.example.com/hooks/pay'],
    ['https://user:pa55@erp.example.com:8443/hooks?token=s3cret', 'https://erp.example.com:8443/hooks'],
    ['http://10.0.0.1/callback?key=k', 'http://10.0.0.1/callback'],
    ['https://erp.example.com', 'https://erp.example.com/'],
    ['https://[::1]:9000/x;y?z', 'https://[::1]:9000/x;y'],
    ['mailto:ops@example.com?subject=s3cret', 'mailto:ops@example.com'],
  ])('shows %s as %s', (raw, shown) => {
    expect(urlForLog(raw)).toBe(shown);
    expect(urlForLog(new URL(raw))).toBe(shown);
  });

  it('cuts a string that is not a URL the same way, as far as its shape tells', () => {
    expect(urlForLog('erp.example.com/hooks?token=s3cret')).toBe('erp.example.com/hooks');
    expect(urlForLog('https://user:pa55@exa mple.com/x#token=s3cret')).toBe('https://exa mple.com/x');
  });

  it('keeps the query string out of the refusal of a string that is not a URL', () => {
    expect(() => checkCallbackUrl('not-a-url/hooks?token=s3cret', 'public-only')).toThrow('not a URL: not-a-url/hooks');
  });
});
