import type { Logger } from '@payments/logger';
import { Counter, MetricNames, type Registry } from '@payments/metrics';
import type { InterObserver } from './providers/inter/client';

/**
 * What operators must see of the calls to a bank (Inter's APIs, any PIX API): waits for the shared budget, 429s, 403s and a webhook
 * left pointing elsewhere, as counters and warning logs naming the account (never a secret). Counters
 * are shown at 0 from the start, so an alert on an increase needs no first event.
 */
export function interMetrics(registry: Registry, logger: Logger): InterObserver {
  const waited = new Counter({
    name: MetricNames.bankCallsWaited,
    help: 'Bank calls that waited for their shared per-minute budget (reason budget) or a bank-imposed wait (blocked)',
    labelNames: ['endpoint', 'reason'],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: MetricNames.bankRateLimited,
    help: 'Bank calls answered 429: every instance waits the Retry-After',
    labelNames: ['endpoint'],
    registers: [registry],
  });
  const forbidden = new Counter({
    name: MetricNames.bankForbidden,
    help: 'Bank calls answered 403: retried after a growing delay; check the account at the bank',
    labelNames: ['endpoint'],
    registers: [registry],
  });
  const webhookConflicts = new Counter({
    name: MetricNames.bankWebhookConflicts,
    help: 'Bank webhooks left pointing at another URL (no --replace-webhook): payments reach us by reconciliation only',
    registers: [registry],
  });
  webhookConflicts.inc(0);
  return {
    waited: (_accountId, endpoint, reason) => waited.inc({ endpoint, reason }),
    rateLimited: (accountId, endpoint, retryAfterMs) => {
      rateLimited.inc({ endpoint });
      logger.warn({ accountId, endpoint, retryAfterMs }, 'the bank answered 429: every instance waits its Retry-After');
    },
    forbidden: (accountId, endpoint, delayMs) => {
      forbidden.inc({ endpoint });
      logger.warn(
        { accountId, endpoint, delayMs },
        'the bank answered 403 (access denied): calls wait a growing delay; check the integration and its scopes',
      );
    },
    webhookConflict: (accountId, registeredUrl, ourUrl) => {
      webhookConflicts.inc();
      logger.warn(
        { accountId, registeredUrl, ourUrl },
        "the bank's webhook points elsewhere and is left as it is (set the account with --replace-webhook to replace it); payments arrive by reconciliation",
      );
    },
  };
}
