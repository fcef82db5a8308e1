import { Counter, Histogram, type Registry } from 'prom-client';
import type { Context, Middleware, Next } from 'koa';
import { MetricNames } from './names';

export const METRICS_PATH = '/metrics';

/** Route label of requests no route matched: raw paths would make one series per probe of a scanner. */
export const UNMATCHED_ROUTE = 'unmatched';

const LABELS = ['method', 'route', 'status'] as const;
type HttpLabel = (typeof LABELS)[number];

/**
 * Koa middleware counting and timing requests by method, route template (@koa/router's matched
 * route, e.g. /api/v1/receivables/:id) and status. Mount it first, so it sees the status the error
 * handler finally answers.
 */
export function httpMetrics(registry: Registry): Middleware {
  const requests = counterOf(registry);
  const duration = histogramOf(registry);
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      // Koa answers an escaping error with its status, or 500.
      status = statusOf(err);
      throw err;
    } finally {
      const labels = { method: ctx.method, route: routeOf(ctx), status: String(status ?? 500) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

/**
 * What an ops server needs to serve `registry`: the request metrics middleware and GET /metrics, in
 * the shape of the health lib's ops server options (spread them in).
 */
export function metricsEndpoint(registry: Registry): { middleware: Middleware[]; routes: Record<string, Middleware> } {
  return { middleware: [httpMetrics(registry)], routes: { [METRICS_PATH]: metricsHandler(registry) } };
}

/** GET /metrics: the registry in Prometheus text format. */
export function metricsHandler(registry: Registry): Middleware {
  return async (ctx: Context) => {
    const body = await registry.metrics();
    ctx.set('content-type', registry.contentType);
    ctx.set('cache-control', 'no-store');
    ctx.body = body;
  };
}

function routeOf(ctx: Context): string {
  // Set by @koa/router on the context once a route (not a mere `use`) matched.
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (matched === undefined) return UNMATCHED_ROUTE;
  return typeof matched === 'string' ? matched : matched.source;
}

function statusOf(err: unknown): number {
  if (typeof err === 'object' && err !== null) {
    const s =
      (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof s === 'number' && s >= 400 && s < 600) return s;
  }
  return 500;
}

// Several Koa apps of one service may share a registry: register the metric once, reuse it after.
function counterOf(registry: Registry): Counter<HttpLabel> {
  const existing = registry.getSingleMetric(MetricNames.httpRequests);
  if (existing instanceof Counter) return existing as Counter<HttpLabel>;
  return new Counter({
    name: MetricNames.httpRequests,
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: LABELS,
    registers: [registry],
  });
}

function histogramOf(registry: Registry): Histogram<HttpLabel> {
  const existing = registry.getSingleMetric(MetricNames.httpRequestDuration);
  if (existing instanceof Histogram) return existing as Histogram<HttpLabel>;
  return new Histogram({
    name: MetricNames.httpRequestDuration,
    help: 'Time to answer an HTTP request, by method, route template and status',
    labelNames: LABELS,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
}
