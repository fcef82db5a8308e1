import type Router from '@koa/router';
import type { Context } from 'koa';
import { DEFAULT_CHECK_TIMEOUT_MS, evaluateReadiness, type CheckStatus, type ReadinessCheck } from './checks';

export const HEALTHZ_PATH = '/healthz';
export const READYZ_PATH = '/readyz';

export interface HealthOptions {
  checks: readonly ReadinessCheck[];
  /** Per-check timeout of /readyz. */
  timeoutMs?: number;
  /**
   * Whether /readyz shows why a check fails (its error message). Off by default: a port the public
   * reaches (the gateway's API, the provider webhooks) names failing checks only, since a raw error
   * can show hosts, users or database names. Ops servers, reached by the orchestrator alone, turn it on.
   */
  showErrors?: boolean;
}

/** Liveness: the process answers HTTP. Deliberately checks nothing else, so a Postgres outage never gets the process restarted. */
export function livenessHandler(ctx: Context): void {
  ctx.set('cache-control', 'no-store');
  ctx.body = { status: 'ok' };
}

/**
 * Readiness: 200 when every dependency answers, else 503 naming each failing check (with its error
 * message only when options.showErrors).
 */
export function readinessHandler(options: HealthOptions): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const report = await evaluateReadiness(options.checks, options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS);
    ctx.set('cache-control', 'no-store');
    ctx.status = report.ready ? 200 : 503;
    ctx.body = {
      status: report.ready ? 'ok' : 'unavailable',
      checks: options.showErrors ? report.checks : withoutErrors(report.checks),
      ...(report.ready ? {} : { failing: report.failing }),
    };
  };
}

function withoutErrors(checks: Record<string, CheckStatus>): Record<string, CheckStatus> {
  return Object.fromEntries(Object.entries(checks).map(([name, { status }]) => [name, { status }]));
}

/** Mounts GET /healthz and GET /readyz on an app's existing router. */
export function mountHealthRoutes<StateT, ContextT>(router: Router<StateT, ContextT>, options: HealthOptions): void {
  const ready = readinessHandler(options);
  router.get(HEALTHZ_PATH, (ctx) => livenessHandler(ctx));
  router.get(READYZ_PATH, (ctx) => ready(ctx));
}
