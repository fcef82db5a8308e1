import type { WebhookAttempt, WebhookPoster } from '../../domain/webhook-dispatcher';

/**
 * POSTs payment webhooks with fetch: JSON body, redirects not followed, a hard timeout, the answer
 * drained so the connection is reused; success on any 2xx.
 */
export function createWebhookPoster(opts: { timeoutMs: number }): WebhookPoster {
  return {
    async post(url: string, body: string, headers: Record<string, string>): Promise<WebhookAttempt> {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
        await response.arrayBuffer().catch(() => undefined); // drain, so the connection is reused
        const ok = response.status >= 200 && response.status < 300;
        return { ok, statusCode: response.status, error: ok ? null : `HTTP ${response.status}` };
      } catch (err) {
        const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
        return { ok: false, statusCode: null, error: `${err instanceof Error ? err.message : String(err)}${cause}` };
      }
    },
  };
}
