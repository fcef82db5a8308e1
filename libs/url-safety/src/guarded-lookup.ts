import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { assertPublicAddress } from './url-safety';

type LookupCallback = Parameters<LookupFunction>[2];

/**
 * A dns.lookup replacement for the HTTP client's connect step: it refuses to connect when any
 * resolved address is not public. Checking at connect time (not before the request) closes the DNS
 * rebinding hole where a name resolves to a public address for the check and a private one after.
 * `resolve` is any dns.lookup-compatible function (callback-svc passes its host resolver's).
 */
export function createGuardedLookup(resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses, family) => {
      if (err) return callback(err, '');
      // A resolver that ignores `all` still gives one address.
      const list: LookupAddress[] =
        typeof addresses === 'string' ? [{ address: addresses, family: family ?? isIP(addresses) }] : addresses;
      try {
        for (const a of list) assertPublicAddress(a.address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '');
      }
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, list);
      callback(null, first.address, first.family);
    });
  };
}
