import { envInt, envString, loadCommonConfig, type CommonConfig } from '@payments/config';

/**
 * receivables-svc's settings. Each field is named after its variable (REGISTRATION_CONCURRENCY is
 * registrationConcurrency, PROVIDER_TIMEOUT_MS provider.timeoutMs); docs/configuration.md lists them.
 */
export interface ReceivablesConfig extends CommonConfig {
  /** receivables-svc's own HTTP port (provider webhooks). */
  port: number;
  provider: { baseUrl: string; apiKey: string; timeoutMs: number; retries: number; webhookSecret: string };
  /** Registration jobs (chunks of 100 receivables) handled at once; cancellations get a quarter. */
  registrationConcurrency: number;
  /** How long a registration job may wait for a burst of intake to end (0: no waiting), and what counts as quiet. */
  intakePriority: { maxDeferMs: number; quietMs: number };
  /** Zone in which zoneless datetimes (payment_date) are written. */
  timeZone: string;
}

export function loadReceivablesConfig(env: Record<string, string | undefined> = process.env): ReceivablesConfig {
  return {
    ...loadCommonConfig(env),
    port: envInt('RECEIVABLES_PORT', 3200, env),
    provider: {
      baseUrl: envString('PROVIDER_BASE_URL', 'http://127.0.0.1:3100', env),
      apiKey: envString('PROVIDER_API_KEY', 'sandbox-api-key', env),
      timeoutMs: envInt('PROVIDER_TIMEOUT_MS', 15_000, env, 1),
      retries: envInt('PROVIDER_RETRIES', 2, env),
      webhookSecret: envString('PROVIDER_WEBHOOK_SECRET', 'sandbox-webhook-secret', env),
    },
    registrationConcurrency: envInt('REGISTRATION_CONCURRENCY', 4, env, 1),
    intakePriority: {
      maxDeferMs: envInt('INTAKE_PRIORITY_MAX_DEFER_MS', 2_000, env),
      quietMs: envInt('INTAKE_PRIORITY_QUIET_MS', 250, env),
    },
    timeZone: envString('TIME_ZONE', 'America/Sao_Paulo', env),
  };
}
