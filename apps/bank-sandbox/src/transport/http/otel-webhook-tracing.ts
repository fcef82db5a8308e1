import { detached, inStoredContext } from '@payments/telemetry';
import type { WebhookTracing } from '../../domain/webhook-dispatcher';

/**
 * Webhook tracing with OpenTelemetry: a notification is POSTed in the trace of the payment that queued
 * it (the HTTP instrumentation then records the POST there), and the poll timer runs outside any trace.
 */
export const otelWebhookTracing: WebhookTracing = { inStoredContext, detached };
