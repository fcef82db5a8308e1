import { isIP } from 'node:net';

export class DnsServersError extends Error {
  override readonly name = 'DnsServersError';
}

/**
 * Parses a comma-separated list of nameservers as the resolver takes them: `1.2.3.4`,
 * `1.2.3.4:5353`, `2001:db8::1` or `[2001:db8::1]:5353` (port 53 when none is given). Addresses
 * only: a nameserver named by a host name would need a lookup of its own.
 */
export function parseDnsServers(list: string): string[] {
  const servers = list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const server of servers) checkServer(server);
  return servers;
}

function checkServer(server: string): void {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  const withPort = /^([^:]+):(\d+)$/.exec(server);
  const [address, port] = bracketed
    ? [bracketed[1], bracketed[2]]
    : withPort
      ? [withPort[1], withPort[2]]
      : [server, undefined];
  const family = isIP(address);
  const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
  if (family === 0 || (bracketed && family !== 6) || (withPort && family !== 4) || !portOk) {
    throw new DnsServersError(
      `"${server}" is not a nameserver address (1.2.3.4, 1.2.3.4:5353, 2001:db8::1 or [2001:db8::1]:5353)`,
    );
  }
}
