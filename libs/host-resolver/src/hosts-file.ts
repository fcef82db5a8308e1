import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { LookupAddress } from 'node:dns';

/** The addresses the hosts file gives each name (lower case, no trailing dot), in file order. */
export type HostsTable = ReadonlyMap<string, readonly LookupAddress[]>;

/**
 * Parses a hosts file: `address name [aliases...]` per line, `#` to the end of a line is a comment.
 * Lines whose first field is not an IP address are skipped, as the C library skips them.
 */
export function parseHostsFile(text: string): HostsTable {
  const table = new Map<string, LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address ?? '');
    if (family === 0) continue;
    for (const raw of names) {
      const name = normaliseName(raw);
      const known = table.get(name) ?? [];
      if (!known.some((a) => a.address === address)) known.push({ address, family });
      table.set(name, known);
    }
  }
  return table;
}

/**
 * Reads and parses a hosts file; a missing or unreadable one is an empty table. Synchronous on
 * purpose: an asynchronous read would queue on libuv's thread pool, the very queue this lookup
 * stays off, and the file is small.
 */
export function readHostsFile(path: string): HostsTable {
  try {
    return parseHostsFile(readFileSync(path, 'utf8'));
  } catch {
    return new Map();
  }
}

/** Host names compare case-insensitively, and `name.` is the fully qualified `name`. */
export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
