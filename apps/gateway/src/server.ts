import { createServer, type RequestListener, type Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { connectBus, serviceBusOptions } from '@payments/bus';
import { keyring } from '@payments/credential-seal';
import { QueueGroups, ServiceError } from '@payments/contracts';
import { openServiceDatabaseIn } from '@payments/db';
import { mountHealthRoutes, serviceChecks } from '@payments/health';
import {
  closeServer,
  keepConnectionsAlive,
  listen,
  startPeriodic,
  startService,
  type ServiceScope,
} from '@payments/lifecycle';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, httpMetrics, metricsHandler, METRICS_PATH } from '@payments/metrics';
import { requireAccessToken } from './transport/http/require-access-token';
import { loadSigningKeys } from './domain/auth/signing-keys';
import type { GatewayConfig } from './config';
import { gatewayMigrations, SCHEMA } from './db/migrations';
import type { GatewayDatabase } from './db/schema';
import type { GatewayContext, GatewayState } from './transport/http/context';
import { accessLog } from './transport/http/access-log';
import { errorHandler } from './transport/http/error-handler';
import { jsonBody } from './transport/http/json-body';
import { Admissions } from './transport/http/admission';
import { downloadRateLimit } from './transport/http/rate-limit';
import { requestId } from './transport/http/request-id';
import { IdempotencyStore } from './db/idempotency-store';
import { mountAuthRoutes } from './transport/http/routes/auth-routes';
import { clientEndpoints } from './transport/http/routes/client-routes';
import { callbackEndpoints } from './transport/http/routes/callback-routes';
import { receivableEndpoints } from './transport/http/routes/receivable-routes';
import { bookletEndpoints, mountBookletDownload } from './transport/http/routes/booklet-routes';
import { mountSlipPdfDownload, mountSlipQrCodeDownload } from './transport/http/routes/slip-pdf-routes';
import { ensureDevelopmentAccounts } from './db/provider-accounts';
import { serveTenantQueries } from './transport/bus/tenant-queries-responder';
import { mountApiDocs } from './transport/http/routes/docs-routes';
import { servedRoutes, type ServedRoute } from './transport/http/route-list';
import { adminApp } from './transport/http/admin-app';
import { sweepConsolePeople } from './db/people/sweep';

export interface RunningGateway {
  /** Base URL the gateway answers on, e.g. http://127.0.0.1:3000 */
  url: string;
  port: number;
  /** Every method and path the router serves (the API docs tests hold the OpenAPI document to it). */
  routes: ServedRoute[];
  /** The admin API on its own port (ADMIN_PORT), e.g. http://127.0.0.1:3600 */
  adminUrl: string;
  adminPort: number;
  /** Every method and path the admin port serves. */
  adminRoutes: ServedRoute[];
  stop(): Promise<void>;
}

/**
 * Starts the gateway: checks schema `gateway` is migrated, connects to NATS, serves the public API on config.port
 * and the admin API on config.adminPort (0 = any).
 */
export function startGateway(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.logLevel),
): Promise<RunningGateway> {
  return startService((scope) => startGatewayIn(scope, config, logger));
}

async function startGatewayIn(
  scope: ServiceScope,
  config: GatewayConfig,
  logger: Logger,
): Promise<Omit<RunningGateway, 'stop'>> {
  // Seals tenants' signing secrets at rest; the previous keys still open what they sealed.
  const credentialsKeyring = keyring(config.credentialsEncryptionKey, config.credentialsPreviousKeys);
  const migrations = gatewayMigrations(credentialsKeyring);
  // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
  const db = await openServiceDatabaseIn<GatewayDatabase>(scope, {
    url: config.databaseUrl,
    schema: SCHEMA,
    applicationName: 'gateway',
    poolSize: config.databasePoolSize,
    migrations,
    logger,
  });
  const keys = await loadSigningKeys(db, config.nodeEnv, config.jwt.privateKey, config.jwt.previousPublicKeys);
  // Tenants created before provider accounts existed get the sandbox one, so they can still charge.
  if (config.nodeEnv === 'development') {
    const given = await ensureDevelopmentAccounts(db);
    if (given > 0) logger.info({ tenants: given }, 'gave tenants without a provider account the sandbox one');
  }
  const bus = await scope.open(
    'bus',
    () => connectBus(serviceBusOptions(config, 'gateway', logger)),
    (opened) => opened.close(),
  );
  // The dead letters it lists and re-drives, and the claim stores it reads (its own) and writes (the
  // services it asks), provisioned by `npm run admin -- bus provision`: only checked here, the start
  // refused otherwise.
  await bus.streams.check(QueueGroups.gateway);
  const idempotency = new IdempotencyStore(db, config.idempotency.ttlHours, config.idempotency.lockTimeoutMs);

  const app = new Koa<GatewayState>({ proxy: true });
  const metrics = createMetricsRegistry('gateway');
  // Outermost, so it counts the status the error handler finally answers.
  app.use(httpMetrics(metrics));
  app.use(requestId);
  app.use(accessLog(logger));
  app.use(errorHandler(logger));

  const router = new Router<GatewayState>();
  const authGuard = requireAccessToken(db, keys, config.jwt);
  mountAuthRoutes(router, { db, keys, settings: config.jwt, requireAccessToken: authGuard, limits: config });
  const pipeline = {
    guards: [authGuard],
    bodyParser: jsonBody(config),
    admissions: new Admissions(db, config.rateLimit, idempotency),
    idempotency,
  };
  for (const mount of [
    ...clientEndpoints(bus),
    ...receivableEndpoints(bus, config.nodeEnv),
    ...bookletEndpoints(bus, config.nodeEnv),
    ...callbackEndpoints(bus),
  ])
    mount(router, pipeline);
  const downloadLimit = downloadRateLimit(db, config);
  mountBookletDownload(router, bus, config.downloadLinkSecret, downloadLimit);
  mountSlipPdfDownload(router, bus, config.downloadLinkSecret, downloadLimit);
  mountSlipQrCodeDownload(router, bus, config.downloadLinkSecret, downloadLimit);
  serveTenantQueries(bus, { db, keyring: credentialsKeyring });
  mountApiDocs(router);
  mountHealthRoutes(router, {
    checks: serviceChecks({ db, nats: bus.connection, schema: SCHEMA, migrations }),
  });
  router.get(METRICS_PATH, metricsHandler(metrics));
  app.use(router.routes());
  app.use(async (ctx: GatewayContext, next) => {
    await next();
    if (ctx.status === 405) throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
  });
  app.use(router.allowedMethods({ throw: false }));

  const admin = adminApp({
    db,
    bus,
    keyring: credentialsKeyring,
    mode: config.nodeEnv,
    limits: config,
    logger,
    keys,
    jwt: config.jwt,
  });
  // Every minute, in bounded batches: keys go about as they expire, never a day of them in one statement.
  // Started before the servers listen, so they stop after the servers closed: a sweep in flight ends
  // before Postgres is released.
  await scope.open(
    'idempotency sweep',
    () => startPeriodic(() => idempotency.deleteExpired(), { intervalMs: 60_000, logger, what: 'idempotency sweep' }),
    (sweeper) => sweeper.stop(),
  );
  // Stale failed sign-ins, and console sessions and invitations long over: every 10 minutes.
  await scope.open(
    'console sessions sweep',
    () =>
      startPeriodic(() => sweepConsolePeople(db, new Date()), {
        intervalMs: 10 * 60_000,
        logger,
        what: 'console sessions sweep',
      }),
    (sweeper) => sweeper.stop(),
  );
  // Each stops accepting connections and lets the requests in flight finish before the rest closes.
  const server = httpServer(app.callback(), config.requestTimeoutMs);
  const port = await scope.open(
    'public server',
    () => listen(server, config.port),
    () => closeServer(server),
  );
  const adminServer = httpServer(admin.app.callback(), config.requestTimeoutMs);
  const adminPort = await scope.open(
    'admin server',
    () => listen(adminServer, config.adminPort),
    () => closeServer(adminServer),
  );
  logger.info({ port, adminPort, busPrefix: config.busPrefix, nodeEnv: config.nodeEnv }, 'gateway listening');

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    routes: servedRoutes(router),
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminPort,
    adminRoutes: admin.routes,
  };
}

/**
 * Node's own request timeout backs up the JSON body deadline (transport/http/json-body, a problem+json 408) for
 * headers trickled in and bodies no route reads: Node answers those a bare 408 and closes. It fires a
 * little after the body deadline, so a JSON endpoint always answers its problem first; Node checks
 * every second (its default is every 30 s, which would let a slow client overstay by that much).
 */
const NODE_TIMEOUT_GRACE_MS = 2_000;

function httpServer(handler: RequestListener, requestTimeoutMs: number): Server {
  const server = createServer({ connectionsCheckingInterval: 1_000 }, handler);
  server.requestTimeout = requestTimeoutMs + NODE_TIMEOUT_GRACE_MS;
  // Idle keep-alive connections stay 65 s; a new request's headers still have requestTimeoutMs.
  return keepConnectionsAlive(server, requestTimeoutMs);
}
