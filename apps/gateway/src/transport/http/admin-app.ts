import Koa from 'koa';
import Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { RunMode } from '@payments/config';
import { ADMIN_OPENAPI_DOCUMENT_PATH, ServiceError } from '@payments/contracts';
import type { Keyring } from '@payments/credential-seal';
import type { Logger } from '@payments/logger';
import type { AccessTokenSettings } from '../../domain/auth/access-tokens';
import { requireOperator } from './require-operator';
import type { SigningKeys } from '../../domain/auth/signing-keys';
import type { GatewayDatabase } from '../../db/schema';
import { accessLog } from './access-log';
import type { GatewayContext, GatewayState } from './context';
import { errorHandler } from './error-handler';
import { jsonBody, type JsonBodyLimits } from './json-body';
import { requestId } from './request-id';
import { servedRoutes, type ServedRoute } from './route-list';
import { systemClock, type Clock } from '../../domain/people/people';
import { mountAdminRoutes } from './routes/admin-routes';
import { mountSessionRoutes } from './routes/session-routes';

export interface AdminAppDeps {
  db: Kysely<GatewayDatabase>;
  bus: Bus;
  keyring: Keyring;
  mode: RunMode;
  limits: JsonBodyLimits;
  logger: Logger;
  /** Sign the tenant JWT a console session carries, as the public API's /authenticate does. */
  keys: SigningKeys;
  jwt: AccessTokenSettings;
  /** The time console sessions are measured by (tests move it); the system's by default. */
  clock?: Clock;
}

/**
 * The admin API's application, served on ADMIN_PORT by a server of its own: none of its routes is
 * mounted on the public port, and none of the public routes here. Errors are problem+json, as there.
 */
export function adminApp(deps: AdminAppDeps): { app: Koa<GatewayState>; routes: ServedRoute[] } {
  const app = new Koa<GatewayState>({ proxy: true });
  app.use(requestId);
  app.use(accessLog(deps.logger));
  app.use(errorHandler(deps.logger, `the admin API is described at ${ADMIN_OPENAPI_DOCUMENT_PATH}`));
  const router = new Router<GatewayState>();
  const clock = deps.clock ?? systemClock;
  const bodyParser = jsonBody(deps.limits);
  // Console sessions and people first: their own guards (a session, an operator, or none to sign in).
  mountSessionRoutes(router, {
    db: deps.db,
    keyring: deps.keyring,
    mode: deps.mode,
    keys: deps.keys,
    jwt: deps.jwt,
    clock,
    bodyParser,
  });
  mountAdminRoutes(router, {
    db: deps.db,
    bus: deps.bus,
    keyring: deps.keyring,
    mode: deps.mode,
    guard: requireOperator(deps.db, clock),
    bodyParser,
  });
  app.use(router.routes());
  app.use(async (ctx: GatewayContext, next) => {
    await next();
    if (ctx.status === 405) throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
  });
  app.use(router.allowedMethods({ throw: false }));
  return { app, routes: servedRoutes(router) };
}
