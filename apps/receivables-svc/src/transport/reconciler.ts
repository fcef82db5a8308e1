import { randomUUID } from 'node:crypto';
import { startPeriodic, type Periodic } from '@payments/lifecycle';
import { reconcileDueAccounts, type ReconciliationDeps } from '../domain/reconciliation';

/**
 * Runs reconciliation on this instance: every few seconds it sweeps the bank accounts that are due
 * (PROVIDER_RECONCILE_INTERVAL_MS after their last complete sweep) and that no other instance holds.
 * Looking more often than the interval keeps a sweep close to when it falls due.
 */
export function startReconciler(deps: Omit<ReconciliationDeps, 'holder'>): Periodic {
  const holder = randomUUID();
  const tickMs = Math.max(1_000, Math.min(15_000, Math.floor(deps.intervalMs / 5)));
  return startPeriodic(() => reconcileDueAccounts({ ...deps, holder }), {
    intervalMs: tickMs,
    logger: deps.logger,
    what: 'reconciliation',
    runAtStart: true,
  });
}
