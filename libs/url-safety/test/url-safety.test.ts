import { lookup } from 'node:dns';
import {
  callbackUrlRefusal,
  checkCallbackUrl,
  classifyAddress,
  createGuardedLookup,
  isPublicAddress,
  literalHostRefusal,
  UnsafeUrlError,
} from '../src';

/** Hosts as a tenant writes them in url_callback, and the range each is judged by in production. */
const REFUSED_HOSTS: Array<[host: string, range: string]> = [
  ['[fec0::1]', 'deprecatedSiteLocal'],
  ['[100::1]', 'discard'],
  ['[::127.0.0.1]', 'loopback'],
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['[::ffff:10.0.0.1]', 'private'],
  ['[::10.0.0.1]', 'private'],
  ['[::1]', 'loopback'],
  ['[::]', 'unspecified'],
  ['[fd00::1]', 'uniqueLocal'],
  ['[fe80::1]', 'linkLocal'],
  ['[ff02::1]', 'multicast'],
  ['[64:ff9b::a00:1]', 'rfc6052'],
  ['[2002:a00:1::]', '6to4'],
  ['[2001::1]', 'teredo'],
  ['[2001:db8::1]', 'reserved'],
  ['10.0.0.1', 'private'],
  ['172.16.3.4', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
];

describe('literal hosts in production (public-only)', () => {
  it.each(REFUSED_HOSTS)('refuses %s, judged %s, at intake and at delivery', (host, range) => {
    const url = `http://${host}:8080/hook`;
    expect(callbackUrlRefusal(url, 'public-only')).toBe(
      `must not point to a ${range} address; callbacks go only to public addresses`,
    );
    expect(() => checkCallbackUrl(url, 'public-only')).toThrow(UnsafeUrlError);
  });

  it.each(['localhost', 'LOCALHOST.', 'a.localhost', 'api.dev.localhost'])('refuses %s', (host) => {
    expect(callbackUrlRefusal(`http://${host}:3000/hook`, 'public-only')).toBe('must not point to localhost');
    expect(() => checkCallbackUrl(`http://${host}/hook`, 'public-only')).toThrow(/localhost/);
  });

  it.each(['http://0x7f.1/hook', 'http://2130706433/hook', 'http://0177.0.0.1/hook'])(
    'refuses loopback spelled otherwise: %s',
    (url) => {
      expect(callbackUrlRefusal(url, 'public-only')).toMatch(/loopback/);
    },
  );

  it.each([
    'http://8.8.8.8/hook',
    'https://[2001:4860:4860::8888]/hook',
    'https://[::ffff:8.8.8.8]/hook',
    'https://erp.example.com/callbacks',
    'https://localhost.example.com/callbacks',
    'https://notlocalhost/callbacks',
  ])('accepts %s (names are judged when resolved)', (url) => {
    expect(callbackUrlRefusal(url, 'public-only')).toBeNull();
    expect(checkCallbackUrl(url, 'public-only').href).toBe(new URL(url).href);
  });

  it('leaves a string that is not a URL to the schema at intake', () => {
    expect(callbackUrlRefusal('not a url', 'public-only')).toBeNull();
  });
});

describe('checkCallbackUrl, what every mode refuses', () => {
  it.each(['ftp://example.com/hook', 'file:///etc/passwd', 'http://user:pw@example.com/hook', 'not a url'])(
    'refuses %s',
    (url) => {
      expect(() => checkCallbackUrl(url, 'public-only')).toThrow(UnsafeUrlError);
      expect(() => checkCallbackUrl(url, 'allow-private')).toThrow(UnsafeUrlError);
    },
  );
});

describe('development (allow-private)', () => {
  it.each(['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://[fec0::1]/hook', 'http://10.0.0.1/hook'])(
    'allows %s',
    (url) => {
      expect(callbackUrlRefusal(url, 'allow-private')).toBeNull();
      expect(checkCallbackUrl(url, 'allow-private').href).toBe(new URL(url).href);
    },
  );
});

describe('classifyAddress', () => {
  it.each([
    ['::ffff:10.1.2.3', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::8.8.8.8', 'unicast'],
    ['::1', 'loopback'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['8.8.8.8', 'unicast'],
    ['2001:4860:4860::8888', 'unicast'],
  ])('%s is %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it('calls public only unicast addresses', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2001:4860:4860::8888')).toBe(true);
    expect(isPublicAddress('fec0::1')).toBe(false);
    expect(isPublicAddress('not an address')).toBe(false);
  });
});

it('leaves host names other than localhost to the resolver', () => {
  expect(literalHostRefusal('erp.internal')).toBeNull();
  expect(literalHostRefusal('printer.local')).toBeNull();
});

describe('guarded lookup', () => {
  const fakeDns = (answer: Array<{ address: string; family: number }>) =>
    ((_host: string, _opts: unknown, cb: (err: null, a: typeof answer) => void) =>
      cb(null, answer)) as unknown as typeof lookup;

  it.each(['10.0.0.1', 'fec0::1', '100::1', '::7f00:1', '::ffff:169.254.169.254'])(
    'refuses a name that resolves to %s (even as one of several) without naming the address',
    (privateAddress) =>
      new Promise<void>((done) => {
        const guarded = createGuardedLookup(
          fakeDns([
            { address: '93.184.216.34', family: 4 },
            { address: privateAddress, family: privateAddress.includes(':') ? 6 : 4 },
          ]),
        );
        guarded('rebind.example', {}, (err) => {
          expect(err).toBeInstanceOf(UnsafeUrlError);
          expect(err!.message).not.toContain(privateAddress);
          expect(err!.message).not.toMatch(/\d+\.\d+|::|private|loopback|siteLocal|discard/i);
          done();
        });
      }),
  );

  it('passes public answers through in the shape asked for', (done) => {
    const guarded = createGuardedLookup(fakeDns([{ address: '93.184.216.34', family: 4 }]));
    guarded('example.com', {}, (err, address, family) => {
      expect(err).toBeNull();
      expect(address).toBe('93.184.216.34');
      expect(family).toBe(4);
      done();
    });
  });

  it('passes every public answer when all are asked for', (done) => {
    const answer = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ];
    createGuardedLookup(fakeDns(answer))('example.com', { all: true }, (err, addresses) => {
      expect(err).toBeNull();
      expect(addresses).toEqual(answer);
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
