import { collectDefaultMetrics, Registry } from 'prom-client';
import { workCounters } from './work';

/**
 * One registry per app (not prom-client's global one): several apps run in one process in tests,
 * and each must show only its own metrics. Default process metrics (CPU, memory, event loop, GC)
 * are collected at scrape time, and so are the process's round trips and commits (./work). Every
 * series carries `service`.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  workCounters(registry);
  return registry;
}
