import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { createDatabase, DB_KEEPALIVE_IDLE_MS } from '../src';

/**
 * TCP keep-alive of the pool's connections, seen where it acts: the kernel's state of each socket
 * (Linux's /proc/net/tcp), not the options the pool was given. An idle connection with keep-alive on
 * has its keep-alive timer armed, due within DB_KEEPALIVE_IDLE_MS; without it, no timer at all.
 */

const URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** /proc/net/tcp counts timers in clock ticks: USER_HZ, 100 a second in Linux's ABI. */
const TICKS_PER_SECOND = 100;

interface SocketTimer {
  /** 0: none, 1: retransmit, 2: keep-alive (or another of the socket's own), 4: zero-window probe. */
  kind: number;
  dueInMs: number;
}

const portOf = (address: string | undefined) => parseInt(address?.split(':')[1] ?? '', 16);

/**
 * The timer of the established IPv4 socket from local port `port` to remote port `serverPort`, or
 * undefined if there is none such. Both ports: Linux gives one ephemeral port to several connections
 * whose peers differ, so under a busy test run another process's socket may share the local port.
 */
async function socketTimer(port: number, serverPort: number): Promise<SocketTimer | undefined> {
  const lines = (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1);
  for (const line of lines) {
    const [, local, remote, state, , timer] = line.trim().split(/\s+/);
    if (state !== '01' || portOf(local) !== port || portOf(remote) !== serverPort) continue;
    const [kind, when] = (timer ?? '').split(':');
    return { kind: parseInt(kind ?? '', 16), dueInMs: (parseInt(when ?? '', 16) * 1000) / TICKS_PER_SECOND };
  }
  return undefined;
}

it('arms TCP keep-alive on every pool connection, due within DB_KEEPALIVE_IDLE_MS', async () => {
  const db = createDatabase<unknown>({ url: URL, schema: 'public', poolSize: 2 });
  try {
    // Two at once, so the pool opens two connections; each names its own port as Postgres sees it.
    const clientPort = () =>
      sql<{ client: number; server: number }>`
        select inet_client_port() as client, inet_server_port() as server, pg_sleep(0.2)`
        .execute(db)
        .then((r) => r.rows[0]);
    const connections = await Promise.all([clientPort(), clientPort()]);
    expect(new Set(connections.map((c) => c?.client)).size).toBe(2);
    // Both idle in the pool now.
    const timers = await Promise.all(connections.map((c) => socketTimer(Number(c?.client), Number(c?.server))));
    for (const timer of timers) {
      expect(timer).toMatchObject({ kind: 2 });
      expect(timer?.dueInMs).toBeLessThanOrEqual(DB_KEEPALIVE_IDLE_MS);
    }
  } finally {
    await db.destroy();
  }
});
