import ipaddr from 'ipaddr.js';
import { urlForLog } from './url-for-log';

/**
 * SSRF rules for URLs the system calls on a tenant's behalf (callback URLs). In production only
 * http(s) URLs whose host is a public unicast address are called: an allow-list, so every range
 * ipaddr.js knows as special (site-local fec0::/10, discard 100::/64, NAT64, 6to4, Teredo, ...) and
 * every range added to it later stays closed. Development allows loopback and private networks so a
 * receiver on the developer's machine works.
 */
export type UrlPolicy = 'public-only' | 'allow-private';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

/** The one ipaddr.js range callbacks may reach in production. */
const PUBLIC_RANGE = 'unicast';

/**
 * The ipaddr.js range of an address, judging an IPv6 address that carries an IPv4 one by the IPv4 it
 * carries: IPv4-mapped (::ffff:127.0.0.1) and IPv4-compatible (::127.0.0.1, which URLs spell
 * ::7f00:1 and ipaddr.js calls unicast) both reach that IPv4 address.
 */
export function classifyAddress(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range();
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return v6.toIPv4Address().range();
  if (range === 'unicast' && v6.parts.slice(0, 6).every((p) => p === 0)) return embeddedIPv4(v6).range();
  return range;
}

const embeddedIPv4 = (v6: ipaddr.IPv6) => {
  const [high, low] = [v6.parts[6], v6.parts[7]];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
};

export function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && classifyAddress(address) === PUBLIC_RANGE;
}

/**
 * For an address a host name resolved to. The message never names the address (nor its range): a
 * tenant must not learn what our resolver answers for internal names.
 */
export function assertPublicAddress(address: string): void {
  if (!isPublicAddress(address))
    throw new UnsafeUrlError('the host does not resolve to a public address, which callbacks require in production');
}

const FOUR_PART_DECIMAL = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * Why a URL host (as `new URL` normalises it: IPv6 in brackets, every IPv4 spelling as four decimal
 * parts) is refused in production without asking DNS: a literal address that is not public unicast,
 * or `localhost` and its subdomains (which always mean loopback, RFC 6761). Null for other names and
 * for public addresses; names are judged when resolved (createGuardedLookup).
 */
export function literalHostRefusal(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point to localhost';
  const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const isLiteral = literal !== host ? ipaddr.IPv6.isValid(literal) : FOUR_PART_DECIMAL.test(literal);
  if (!isLiteral || !ipaddr.isValid(literal)) return null;
  const range = classifyAddress(literal);
  return range === PUBLIC_RANGE ? null : `must not point to a ${range} address; callbacks go only to public addresses`;
}

/**
 * The intake check of a callback URL: why it is refused under `policy`, or null. A string that is not
 * an http(s) URL is left to the schema (null here), so a field gets one error.
 */
export function callbackUrlRefusal(raw: string, policy: UrlPolicy): string | null {
  if (policy === 'allow-private') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  return literalHostRefusal(url.hostname);
}

/** Checks scheme and, for literal IP hosts, the address. Host names are checked when resolved (guarded lookup). */
export function checkCallbackUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`not a URL: ${urlForLog(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeUrlError(`scheme ${url.protocol} is not allowed; use http or https`);
  if (url.username || url.password) throw new UnsafeUrlError('credentials in the URL are not allowed');
  if (policy === 'allow-private') return url;
  const refusal = literalHostRefusal(url.hostname);
  if (refusal) throw new UnsafeUrlError(`url_callback ${refusal}`);
  return url;
}
