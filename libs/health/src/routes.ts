import type Router from '@koa/router';
import type { Context } from 'koa';
import { DEFAULT_CHECK_TIMEOUT_MS, evaluateReadiness, type ReadinessCheck } from './checks';

export const HEALTHZ_PATH = '/healthz';
export const READYZ_PATH = '/readyz';

export interface HealthOptions {
  checks: readonly ReadinessCheck[];
  /** Per-check timeout of /readyz. */
  timeoutMs?: number;
}

/** Liveness: the process answers HTTP. Deliberately checks nothing else, so a Postgres outage never gets the process restarted. */
export function livenessHandler(ctx: Context): void {
  ctx.set('cache-control', 'no-store');
  ctx.body = { status: 'ok' };
}

/** Readiness: 200 when every dependency answers, else 503 naming each failing check. */
export function readinessHandler(options: HealthOptions): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const report = await evaluateReadiness(options.checks, options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS);
    ctx.set('cache-control', 'no-store');
    ctx.status = report.ready ? 200 : 503;
    ctx.body = {
      status: report.ready ? 'ok' : 'unavailable',
      checks: report.checks,
      ...(report.ready ? {} : { failing: report.failing }),
    };
  };
}

/** Mounts GET /healthz and GET /readyz on an app's existing router. */
export function mountHealthRoutes<StateT, ContextT>(router: Router<StateT, ContextT>, options: HealthOptions): void {
  const ready = readinessHandler(options);
  router.get(HEALTHZ_PATH, (ctx) => livenessHandler(ctx));
  router.get(READYZ_PATH, (ctx) => ready(ctx));
}
