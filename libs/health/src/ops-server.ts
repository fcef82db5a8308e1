import { createServer, type Server } from 'node:http';
import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { closeServer, keepConnectionsAlive, listen, type ServiceScope } from '@payments/lifecycle';
import { serviceChecks, type ServiceDependencies } from './checks';
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

  const server: Server = keepConnectionsAlive(createServer(app.callback()));
  server.requestTimeout = 30_000;
  const port = await listen(server, options.port);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    // A scraper's keep-alive connection must not hold the shutdown.
    stop: () => closeServer(server),
  };
}

/** A service's database, bus connection and migrations: what its readiness is made of. */
export interface ServiceOpsOptions<DB> extends Omit<OpsServerOptions, 'checks'>, ServiceDependencies<DB> {}

/**
 * The ops server of a service that runs on Postgres and NATS, opened in its scope and stopped with
 * it: ready while Postgres and NATS answer and its schema is migrated.
 */
export function openOpsServer<DB>(scope: ServiceScope, options: ServiceOpsOptions<DB>): Promise<RunningOpsServer> {
  const { db, nats, schema, migrations, ...server } = options;
  const checks = serviceChecks({ db, nats, schema, migrations });
  return scope.open(
    'ops server',
    () => startOpsServer({ ...server, checks }),
    (opened) => opened.stop(),
  );
}
