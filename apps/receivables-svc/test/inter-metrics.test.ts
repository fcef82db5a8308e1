import { Writable } from 'node:stream';
import { createLogger } from '@payments/logger';
import { createMetricsRegistry, MetricNames } from '@payments/metrics';
import { interMetrics } from '../src/transport/inter-metrics';

/** What operators see of Inter's refusals: counters on /metrics and warning logs naming the account. */
it('shows 403s, 429s, waits and a webhook left elsewhere as counters and warnings naming the account', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const registry = createMetricsRegistry('receivables-svc');
  const observer = interMetrics(registry, createLogger('receivables-svc', 'info', sink));
  observer.forbidden?.('account-1', 'create', 2_000);
  observer.rateLimited?.('account-1', 'consult', 30_000);
  observer.waited?.('account-1', 'create', 'budget', 500);
  observer.webhookConflict?.('account-2', 'https://erp.example.com/hook', 'https://us.example.com/hook');
  const text = await registry.metrics();
  expect(text).toContain(`${MetricNames.bankForbidden}{endpoint="create",service="receivables-svc"} 1`);
  expect(text).toContain(`${MetricNames.bankRateLimited}{endpoint="consult",service="receivables-svc"} 1`);
  expect(text).toContain(
    `${MetricNames.bankCallsWaited}{endpoint="create",reason="budget",service="receivables-svc"} 1`,
  );
  expect(text).toContain(`${MetricNames.bankWebhookConflicts}{service="receivables-svc"} 1`);
  const warnings = lines.map((l) => JSON.parse(l) as { level: unknown; accountId?: string; msg: string });
  expect(warnings.map((w) => w.accountId)).toEqual(['account-1', 'account-1', 'account-2']);
  expect(warnings[0].msg).toMatch(/403/);
});
