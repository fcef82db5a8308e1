import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { mountHealthRoutes, type HealthOptions } from './routes';

export interface OpsServerOptions extends HealthOptions {
  /** 0 = any free port (tests). */
  port: number;
  /** Runs before the routes, e.g. request metrics. */
  middleware?: Middleware[];
  /** Further GET routes, e.g. /metrics (kept out of this lib: it knows only health). */
  routes?: Record<string, Middleware>;
}

export interface RunningOpsServer {
  port: number;
  /** e.g. http://127.0.0.1:3300 */
  url: string;
  stop(): Promise<void>;
}

/**
 * The small HTTP server of a service that has no HTTP API of its own (it talks over NATS): only
 * /healthz, /readyz and whatever ops routes the app adds, for orchestrators and Prometheus.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<RunningOpsServer> {
  const app = new Koa();
  for (const m of options.middleware ?? []) app.use(m);
  const router = new Router();
  // Only the orchestrator and Prometheus reach an ops port: /readyz may say why a check fails.
  mountHealthRoutes(router, { ...options, showErrors: options.showErrors ?? true });
  for (const [path, handler] of Object.entries(options.routes ?? {})) router.get(path, handler);
  app.use(router.routes());
  app.use(router.allowedMethods());

  const server: Server = createServer(app.callback());
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A scraper's keep-alive connection must not hold the shutdown.
      server.closeIdleConnections();
      await closed;
    },
  };
}
