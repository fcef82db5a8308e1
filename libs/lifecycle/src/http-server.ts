import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How long an idle keep-alive connection stays open: longer than a load balancer's 60 s idle timeout,
 * so the balancer always closes first and never sends a request on a socket we are closing (Node's
 * default of 5 s had requests reset in steady state). See docs/kubernetes.md.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Node must wait for headers longer than it keeps a connection idle, or it may cut a reused one. */
const HEADERS_TIMEOUT_MS = KEEP_ALIVE_TIMEOUT_MS + 1_000;

interface Drain {
  inFlight: Set<ServerResponse>;
  draining: boolean;
}

const drains = new WeakMap<Server, Drain>();

/**
 * Sets the keep-alive timeouts every HTTP server of ours shares, and follows its responses so that
 * closeServer can end their connections. A server with a shorter `headersTimeout` for slow clients
 * keeps it by passing it.
 */
export function keepConnectionsAlive<S extends Server>(server: S, headersTimeoutMs = HEADERS_TIMEOUT_MS): S {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = headersTimeoutMs;
  const drain: Drain = { inFlight: new Set(), draining: false };
  drains.set(server, drain);
  server.on('request', (_req, res: ServerResponse) => {
    drain.inFlight.add(res);
    if (drain.draining) endAfterResponse(server, res);
    res.on('close', () => drain.inFlight.delete(res));
  });
  return server;
}

/**
 * Stops `server`: no new connections, requests in flight finish and their connections close after
 * the response (`Connection: close`); idle keep-alive connections close now, so stopping never waits
 * out the 65 s keep-alive.
 */
export function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const drain = drains.get(server);
  if (drain) {
    drain.draining = true;
    for (const res of drain.inFlight) endAfterResponse(server, res);
  }
  server.closeIdleConnections();
  return closed;
}

function endAfterResponse(server: Server, res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  // Headers already sent with keep-alive: the connection turns idle once the response is written.
  else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
}

/**
 * Listens on `port` (0: any free one) and resolves with the port taken. A port in use (EADDRINUSE)
 * rejects, so the start fails and names the port's variable (describeStartupFailure).
 */
export async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
