import { createServer } from 'node:net';

/**
 * Ports a test or bench gives an app before it starts, below Linux's ephemeral range (32768-60999 by
 * default). A port picked with listen(0) comes from that range, and between closing it and the app
 * binding it any outgoing connection (to Postgres, to NATS) may take it as its local port: with two
 * e2e shards side by side that happened (EADDRINUSE on receivables-svc's webhook port).
 */
const LOW = 20_000;
const HIGH = 32_000;

/** Whether nothing listens on `port` (checked on every address, as the apps listen). */
export async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, () => resolve(true));
  });
  if (free) await new Promise((r) => server.close(r));
  return free;
}

/**
 * A TCP port free at the time of asking, outside the range outgoing connections draw from. With
 * `taken` (the ports already handed out for one system, not yet listened on), one not among them,
 * added to it.
 */
export async function freePort(taken?: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (taken?.has(port) || !(await isFree(port))) continue;
    taken?.add(port);
    return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 200 tries`);
}
