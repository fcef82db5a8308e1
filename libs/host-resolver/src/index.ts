/**
 * Host names resolved off libuv's thread pool: the hosts file, then the nameservers through c-ares,
 * with a deadline per name and a short cache. `lookup` stands in for dns.lookup.
 */
export {
  createHostResolver,
  DNS_DEADLINE_MS,
  FAILURE_TTL_MS,
  HOSTS_FILE_REFRESH_MS,
  HostLookupError,
  MAX_ANSWER_TTL_MS,
  type HostResolver,
  type HostResolverOptions,
} from './host-resolver';
export { DnsServersError, parseDnsServers } from './dns-servers';
export { normaliseName, parseHostsFile, readHostsFile, type HostsTable } from './hosts-file';
