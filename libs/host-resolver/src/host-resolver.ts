import { promises as dns, type LookupAddress, type LookupOptions, type RecordWithTtl } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { normaliseName, readHostsFile, type HostsTable } from './hosts-file';

/** How long one name may take at the nameservers, A and AAAA together. */
export const DNS_DEADLINE_MS = 2_000;
/** The longest a DNS answer is kept, whatever its TTL: a receiver that moves is followed this soon. */
export const MAX_ANSWER_TTL_MS = 30_000;
/** How long a failed name (no answer in time, no such name) is answered from memory before it is asked again. */
export const FAILURE_TTL_MS = 5_000;
/** The hosts file is read again when a lookup finds it older than this. */
export const HOSTS_FILE_REFRESH_MS = 5_000;
/** The least a nameserver is given before the next one is asked. */
const MIN_TRY_MS = 100;
/** Names remembered at most, answers and failures together. */
const MAX_NAMES = 10_000;

export interface HostResolverOptions {
  /** Nameservers (parseDnsServers' forms); empty or unset: the system's, from /etc/resolv.conf. */
  servers?: readonly string[];
  deadlineMs?: number;
  maxAnswerTtlMs?: number;
  failureTtlMs?: number;
  hostsFile?: string;
  hostsFileRefreshMs?: number;
}

export interface HostResolver {
  /** A dns.lookup replacement (undici's connect.lookup, net.connect's lookup): honours `all` and `family`. */
  lookup: LookupFunction;
  /** Every address of a name: the hosts file's if it lists the name, else the nameservers' (A, then AAAA). */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /** Cancels the queries under way (they fail with ECANCELLED) and forgets every answer. */
  close(): void;
}

/** A name that could not be resolved; `code` is dns.lookup's (ETIMEOUT, ENOTFOUND, ESERVFAIL...). */
export class HostLookupError extends Error implements NodeJS.ErrnoException {
  override readonly name = 'HostLookupError';
  readonly syscall = 'lookup';
  constructor(
    readonly code: string,
    readonly hostname: string,
    message: string,
  ) {
    super(message);
  }
}

type Answer = { addresses: LookupAddress[] } | { error: HostLookupError };

/** The codes c-ares gives for "the name exists but has no record of this type" and "no such name". */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Resolves host names without libuv's thread pool. dns.lookup runs getaddrinfo there, four threads
 * shared by the whole process: a few names whose nameserver never answers hold every thread, and any
 * lookup behind them, even of `localhost`, waits. Here names come first from the hosts file (read
 * synchronously, it is small), then from the nameservers through c-ares, which waits on sockets on
 * the event loop. Each name has a deadline at the nameservers; answers are kept for their TTL
 * (capped), failures briefly, and concurrent lookups of one name share one query.
 *
 * Names are asked as given: the resolv.conf search list is not applied (callback URLs carry full
 * names; compose service names resolve as they are).
 */
export function createHostResolver(options: HostResolverOptions = {}): HostResolver {
  const deadlineMs = options.deadlineMs ?? DNS_DEADLINE_MS;
  const maxAnswerTtlMs = options.maxAnswerTtlMs ?? MAX_ANSWER_TTL_MS;
  const failureTtlMs = options.failureTtlMs ?? FAILURE_TTL_MS;
  const hostsPath = options.hostsFile ?? '/etc/hosts';
  const hostsRefreshMs = options.hostsFileRefreshMs ?? HOSTS_FILE_REFRESH_MS;
  const servers = options.servers?.length ? [...options.servers] : new dns.Resolver().getServers();
  // One try per server. c-ares asks the next server only once the one before timed out, and Node 20
  // checks c-ares's timeouts on a timer that ticks once a second, so a try lasts from its timeout to
  // a second more. Alone, a server gets the whole deadline (which ends the lookup on time); with
  // others, a share small enough that a dead first server leaves the next one time to answer.
  const resolver = new dns.Resolver({
    timeout: servers.length > 1 ? Math.max(MIN_TRY_MS, Math.floor(deadlineMs / (2 * servers.length))) : deadlineMs,
    tries: 1,
  });
  if (servers.length > 0) resolver.setServers(servers);
  const answers = new LRUCache<string, Answer>({ max: MAX_NAMES });
  const pending = new Map<string, Promise<Answer>>();
  let hosts: HostsTable = readHostsFile(hostsPath);
  let hostsReadAt = Date.now();

  function fromHostsFile(name: string): LookupAddress[] | undefined {
    if (Date.now() - hostsReadAt >= hostsRefreshMs) {
      hosts = readHostsFile(hostsPath);
      hostsReadAt = Date.now();
    }
    const listed = hosts.get(name);
    if (listed) return [...listed];
    // Loopback by definition, even when the hosts file does not say so.
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    return undefined;
  }

  async function ask(name: string): Promise<Answer> {
    const answer = await queryNameservers(resolver, name, deadlineMs);
    const ttlMs = 'error' in answer ? failureTtlMs : Math.min(answer.ttlMs, maxAnswerTtlMs);
    const kept: Answer = 'error' in answer ? answer : { addresses: answer.addresses };
    if (ttlMs > 0) answers.set(name, kept, { ttl: ttlMs });
    return kept;
  }

  async function resolve(hostname: string): Promise<LookupAddress[]> {
    const literal = isIP(hostname);
    if (literal !== 0) return [{ address: hostname, family: literal }];
    const name = normaliseName(hostname);
    const listed = fromHostsFile(name);
    if (listed) return listed;
    let answer = answers.get(name);
    if (!answer) {
      let asking = pending.get(name);
      if (!asking) {
        asking = ask(name).finally(() => pending.delete(name));
        pending.set(name, asking);
      }
      answer = await asking;
    }
    if ('error' in answer) throw answer.error;
    return [...answer.addresses];
  }

  const lookup: LookupFunction = (hostname: string, lookupOptions: LookupOptions, callback) => {
    const family = familyOf(lookupOptions.family);
    resolve(hostname).then(
      (all) => {
        const list = family === 0 ? all : all.filter((a) => a.family === family);
        const first = list[0];
        if (!first)
          return callback(new HostLookupError('ENOTFOUND', hostname, `${hostname} has no IPv${family} address`), '');
        if (lookupOptions.all) callback(null, list);
        else callback(null, first.address, first.family);
      },
      (err: HostLookupError) => callback(err, ''),
    );
  };

  return {
    lookup,
    resolve,
    close() {
      resolver.cancel();
      answers.clear();
    },
  };
}

function familyOf(family: LookupOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

type Outcome = { records: RecordWithTtl[] } | { code: string };

/**
 * A and AAAA of one name, both within `deadlineMs`. What came in time counts: one family's
 * addresses are an answer even when the other's query failed or is still out.
 */
async function queryNameservers(
  resolver: dns.Resolver,
  name: string,
  deadlineMs: number,
): Promise<{ addresses: LookupAddress[]; ttlMs: number } | { error: HostLookupError }> {
  const outcomes: Array<Outcome | undefined> = [undefined, undefined];
  const settle = (at: number) => (p: Promise<RecordWithTtl[]>) =>
    p.then(
      (records) => void (outcomes[at] = { records }),
      (err: NodeJS.ErrnoException) => void (outcomes[at] = { code: err.code ?? 'EDNS' }),
    );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
  await Promise.race([
    Promise.all([settle(0)(resolver.resolve4(name, { ttl: true })), settle(1)(resolver.resolve6(name, { ttl: true }))]),
    deadline,
  ]);
  clearTimeout(timer);

  const addresses: LookupAddress[] = [];
  let ttlSeconds = Infinity;
  outcomes.forEach((outcome, at) => {
    if (!outcome || !('records' in outcome)) return;
    for (const r of outcome.records) {
      addresses.push({ address: r.address, family: at === 0 ? 4 : 6 });
      ttlSeconds = Math.min(ttlSeconds, r.ttl);
    }
  });
  if (addresses.length > 0) return { addresses, ttlMs: ttlSeconds * 1000 };

  const codes = outcomes.map((o) => (o && 'code' in o ? o.code : o ? 'ENODATA' : 'ETIMEOUT'));
  if (codes.includes('ETIMEOUT'))
    return {
      error: new HostLookupError('ETIMEOUT', name, `DNS lookup of ${name}: no answer within ${deadlineMs} ms`),
    };
  if (codes.every((code) => NO_RECORD.has(code)))
    return { error: new HostLookupError('ENOTFOUND', name, `DNS lookup of ${name}: no such name or no address`) };
  const code = codes.find((c) => !NO_RECORD.has(c)) ?? 'EDNS';
  return { error: new HostLookupError(code, name, `DNS lookup of ${name} failed: ${code}`) };
}
