import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { assertPublicAddress } from './url-safety';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A dns.lookup replacement for the HTTP client's connect step: it refuses to connect when any
 * resolved address is not public. Checking at connect time (not before the request) closes the DNS
 * rebinding hole where a name resolves to a public address for the check and a private one after.
 */
export function createGuardedLookup(resolve: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      try {
        for (const a of list) assertPublicAddress(a.address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
