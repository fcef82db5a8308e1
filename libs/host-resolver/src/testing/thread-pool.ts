import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Occupies every thread of libuv's pool (4, libuv's default; none of ours changes it) the way
 * getaddrinfo against a silent nameserver does: each waits, using no CPU, in an open() of a FIFO
 * that has no writer yet. Whatever needs the pool meanwhile (dns.lookup, fs) queues behind them.
 */
export function blockThreadPool(threads = 4): { release(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'thread-pool-'));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const readers: Array<Promise<FileHandle>> = [];
  for (let i = 0; i < threads; i++) readers.push(open(fifo, 'r'));
  let released: Promise<void> | undefined;
  const release = async () => {
    // Opening the write end (without blocking, from this thread) lets every waiting open() return.
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const handles = await Promise.all(readers);
    closeSync(writer);
    await Promise.all(handles.map((h) => h.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  return { release: () => (released ??= release()) };
}
