import { createServer, type Server } from 'node:http';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { closeServer, keepConnectionsAlive, listen, startService } from '@payments/lifecycle';
import { ADMIN_OPENAPI_DOCUMENT_PATH } from '@payments/contracts';
import { mountHealthRoutes } from '@payments/health';
import type { Logger } from '@payments/logger';
import type { ConsoleConfig } from './config';
import { publicApi } from './gateway/public-api';
import { adminClient, expectData } from './operator/admin-client';
import type { ConsoleState } from './http/context';
import { sameOriginOnly } from './http/csrf';
import { errorHandler } from './http/error-handler';
import { Flashes } from './http/flash';
import { securityHeaders } from './http/security-headers';
import { mountAuthRoutes } from './routes/auth-routes';
import { operatorRouter } from './routes/operator-mount';
import { peopleRouters } from './people/routes';
import { PeopleApi } from './people/people-api';
import { AdminCalls, callerHeaders, SessionsApi } from './session/sessions-api';
import { operatorSession } from './session/guards';
import { SessionStore } from './session/store';
import { tenantRouter } from './tenant/mount';
import { mountLangRoute } from './views/locale';
import { STYLESHEET, STYLESHEET_PATH } from './views/stylesheet';

export interface RunningConsole {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The console's Koa application: pages over the gateway's public and admin APIs, no state of its own. */
export function consoleApp(
  config: ConsoleConfig,
  logger: Logger,
  options: { now?: () => number } = {},
): Koa<ConsoleState> {
  const { gatewayTimeoutMs } = config;
  const api = publicApi(config.gatewayUrl, { gatewayTimeoutMs });
  // One admin client per operator request: it carries that operator's session id, and the end user's
  // address and request id for the gateway's audit.
  const admin = (ctx: Context) =>
    adminClient({
      baseUrl: config.gatewayAdminUrl,
      sessionId: operatorSession(ctx).sessionId,
      caller: { ...callerHeaders(ctx) },
      gatewayTimeoutMs,
    });
  const adminCalls = new AdminCalls({ baseUrl: config.gatewayAdminUrl, gatewayTimeoutMs });
  const sessionsApi = new SessionsApi(adminCalls);
  const flashes = new Flashes(config.sessionKey, config.secureCookies);
  const flash = flashes.add.bind(flashes);
  const sessions = new SessionStore({
    sessions: sessionsApi,
    flash,
    secureCookies: config.secureCookies,
    now: options.now,
  });

  // With proxies in front, ctx.ip is the entry TRUSTED_PROXY_HOPS from the right of X-Forwarded-For.
  const app = new Koa<ConsoleState>({ proxy: config.trustedProxyHops > 0, maxIpsCount: config.trustedProxyHops });
  app.use(securityHeaders);

  // Ops and the stylesheet: no session, no CSRF check.
  const open = new Router<ConsoleState>();
  mountHealthRoutes(open, {
    checks: [
      { name: 'gateway', probe: () => reachable(`${config.gatewayUrl}/healthz`) },
      // The admin API's document needs no credential: the cheapest proof the admin port answers.
      { name: 'gateway-admin', probe: () => reachable(`${config.gatewayAdminUrl}${ADMIN_OPENAPI_DOCUMENT_PATH}`) },
    ],
  });
  open.get(STYLESHEET_PATH, (ctx) => {
    ctx.set('cache-control', 'public, max-age=31536000, immutable');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = STYLESHEET;
  });
  mountLangRoute(open, { secureCookies: config.secureCookies });
  app.use(open.routes());

  app.use(flashes.middleware());
  app.use(errorHandler({ logger, endSession: (ctx) => sessions.clear(ctx), flash }));
  app.use(sameOriginOnly);
  app.use(sessions.middleware());

  const pages = new Router<ConsoleState>();
  mountAuthRoutes(pages, {
    sessions: sessionsApi,
    store: sessions,
    flash,
    developmentSignIns: config.nodeEnv === 'development',
  });
  const people = peopleRouters({
    people: new PeopleApi(adminCalls),
    flash,
    secureCookies: config.secureCookies,
    tenants: async (ctx) => (await expectData('list tenants', admin(ctx).GET('/admin/v1/tenants'))).items,
  });
  app.use(pages.routes());
  for (const router of people) app.use(router.routes());
  app.use(tenantRouter({ api, gatewayUrl: config.gatewayUrl, gatewayTimeoutMs, flash, logger }).routes());
  app.use(operatorRouter({ admin, flash, logger }).routes());
  return app;
}

/** Starts the console on config.port (0: any free port): one server, closed by stop(). */
export function startConsole(config: ConsoleConfig, logger: Logger): Promise<RunningConsole> {
  if (config.sessionKeyIsEphemeral)
    logger.warn(
      'CONSOLE_SESSION_KEY is not set: flash messages are sealed with a random key of this process (development)',
    );
  return startService(async (scope) => {
    const server: Server = keepConnectionsAlive(createServer(consoleApp(config, logger).callback()));
    // Pages wait for the gateway at most config.gatewayTimeoutMs; a slow client gets no more than this.
    server.requestTimeout = 30_000;
    const port = await scope.open(
      'server',
      () => listen(server, config.port),
      () => closeServer(server),
    );
    logger.info({ port, gateway: config.gatewayUrl }, 'console listening');
    return { url: `http://127.0.0.1:${port}`, port };
  });
}

async function reachable(url: string): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
}
