import ipaddr from 'ipaddr.js';

/**
 * SSRF rules for URLs the system calls on a tenant's behalf (callback URLs). In production only
 * http(s) URLs whose host resolves to public unicast addresses are called; development allows
 * loopback and private networks so a receiver on the developer's machine works.
 */
export type UrlPolicy = 'public-only' | 'allow-private';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

/** ipaddr.js range names that are not the public internet. */
const NON_PUBLIC_RANGES = new Set([
  'unspecified',
  'broadcast',
  'multicast',
  'linkLocal',
  'loopback',
  'carrierGradeNat',
  'private',
  'reserved',
  'uniqueLocal',
  'ipv4Mapped',
  'rfc6145',
  'rfc6052',
  '6to4',
  'teredo',
  'benchmarking',
  'amt',
  'as112',
  'deprecated',
  'orchid2',
  'droneRemoteIdProtocolEntityTags',
]);

/** The ipaddr.js range of an address, after unwrapping IPv4-mapped IPv6 (::ffff:127.0.0.1). */
export function classifyAddress(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range();
}

export function assertPublicAddress(address: string): void {
  const range = classifyAddress(address);
  if (NON_PUBLIC_RANGES.has(range))
    throw new UnsafeUrlError(`address ${address} is in a ${range} range, which callbacks may not reach in production`);
}

/** Checks scheme and, for literal IP hosts, the address. Host names are checked when resolved (guarded lookup). */
export function checkCallbackUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeUrlError(`scheme ${url.protocol} is not allowed; use http or https`);
  if (url.username || url.password) throw new UnsafeUrlError('credentials in the URL are not allowed');
  if (policy === 'allow-private') return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) assertPublicAddress(host);
  else if (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.endsWith('.local') ||
    host.endsWith('.internal')
  ) {
    throw new UnsafeUrlError(`host ${host} is local`);
  }
  return url;
}
