import { lookup } from 'node:dns';
import { checkCallbackUrl, classifyAddress, createGuardedLookup, UnsafeUrlError } from '../src';

describe('checkCallbackUrl in production (public-only)', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://10.0.0.5/hook',
    'http://172.16.3.4/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/hook',
    'http://0.0.0.0/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://localhost:3000/hook',
    'http://api.localhost/hook',
    'ftp://example.com/hook',
    'file:///etc/passwd',
    'http://user:pw@example.com/hook',
    'not a url',
  ])('refuses %s', (url) => {
    expect(() => checkCallbackUrl(url, 'public-only')).toThrow(UnsafeUrlError);
  });

  it.each(['https://erp.example.com/callbacks', 'http://8.8.8.8/hook', 'https://[2001:4860:4860::8888]/hook'])(
    'accepts %s',
    (url) => {
      expect(checkCallbackUrl(url, 'public-only').toString()).toContain('/');
    },
  );
});

describe('checkCallbackUrl in development (allow-private)', () => {
  it('accepts loopback and private hosts but still only http(s)', () => {
    expect(checkCallbackUrl('http://127.0.0.1:9000/hook', 'allow-private').port).toBe('9000');
    expect(checkCallbackUrl('http://localhost/hook', 'allow-private').hostname).toBe('localhost');
    expect(() => checkCallbackUrl('gopher://127.0.0.1/', 'allow-private')).toThrow(/scheme/);
  });
});

it('classifies addresses through IPv4-mapped IPv6', () => {
  expect(classifyAddress('::ffff:10.1.2.3')).toBe('private');
  expect(classifyAddress('8.8.8.8')).toBe('unicast');
});

describe('guarded lookup', () => {
  const fakeDns = (answer: Array<{ address: string; family: number }>) =>
    ((_host: string, _opts: unknown, cb: (err: null, a: typeof answer) => void) =>
      cb(null, answer)) as unknown as typeof lookup;

  it('refuses a name that resolves to a private address (even one of several)', (done) => {
    const guarded = createGuardedLookup(
      fakeDns([
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ]),
    );
    guarded('rebind.example', {}, (err) => {
      expect(err).toBeInstanceOf(UnsafeUrlError);
      done();
    });
  });

  it('passes public answers through in the shape asked for', (done) => {
    const guarded = createGuardedLookup(fakeDns([{ address: '93.184.216.34', family: 4 }]));
    guarded('example.com', {}, (err, address, family) => {
      expect(err).toBeNull();
      expect(address).toBe('93.184.216.34');
      expect(family).toBe(4);
      done();
    });
  });

  it('refuses localhost resolved by the real resolver', (done) => {
    createGuardedLookup()('localhost', {}, (err) => {
      expect(err).toBeInstanceOf(UnsafeUrlError);
      done();
    });
  });
});
