import { sql } from 'kysely';
import { Agent, request } from 'undici';
import type { Logger } from '@payments/logger';
import type { InterDb } from './db';

export interface InterWebhookSettings {
  /** Delays after each failed attempt; the last one repeats until maxAttempts. */
  retryMs: number[];
  maxAttempts: number;
  timeoutMs: number;
  pollMs: number;
}

/** The certificate the bank presents when the webhook URL is https (Inter authenticates its calls by mutual TLS). */
export interface SenderIdentity {
  certPem: string;
  keyPem: string;
}

const BATCH = 20;

/**
 * Delivers the Inter dialect's payment webhooks (table inter_notifications): a POST of the JSON array to
 * the URL the client registered, retried on the sandbox's webhook schedule until a 2xx or maxAttempts.
 * Unsigned, as Inter's are: the receiver authenticates the bank by mutual TLS and confirms by consulting.
 */
export class InterWebhookSender {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly agent: Agent;

  constructor(
    private readonly db: InterDb,
    private readonly settings: InterWebhookSettings,
    private readonly logger: Logger,
    identity: SenderIdentity,
  ) {
    this.agent = new Agent({ connect: { cert: identity.certPem, key: identity.keyPem } });
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks at the queue now (a payment was just recorded). */
  wake(): void {
    if (this.stopped) return;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.agent.close();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running) return this.schedule(this.settings.pollMs);
      this.running = this.pass()
        .catch((err: unknown) => this.logger.error({ err }, 'inter webhook pass failed'))
        .finally(() => {
          this.running = null;
          this.schedule(this.settings.pollMs);
        });
    }, delayMs);
  }

  private async pass(): Promise<void> {
    const lease = new Date(Date.now() + this.settings.timeoutMs + 5_000);
    const due = await this.db
      .updateTable('inter_notifications')
      .set({ locked_until: lease })
      .where(
        'notification_id',
        'in',
        this.db
          .selectFrom('inter_notifications')
          .select('notification_id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', new Date())
          .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', new Date())]))
          .orderBy('next_attempt_at')
          .limit(BATCH),
      )
      .returningAll()
      .execute();
    await Promise.all(due.map((n) => this.deliver(n.notification_id, n.url, n.body, n.attempt_count)));
  }

  private async deliver(id: string, url: string, body: string, attemptsSoFar: number): Promise<void> {
    const attempt = await this.post(url, body);
    const attempts = attemptsSoFar + 1;
    if (attempt.ok) {
      await this.db
        .updateTable('inter_notifications')
        .set({
          status: 'delivered',
          attempt_count: attempts,
          delivered_at: new Date(),
          last_status_code: attempt.statusCode,
          last_error: null,
          locked_until: null,
        })
        .where('notification_id', '=', id)
        .execute();
      return;
    }
    const failed = attempts >= this.settings.maxAttempts;
    const retryMs = this.settings.retryMs[Math.min(attempts - 1, this.settings.retryMs.length - 1)];
    await this.db
      .updateTable('inter_notifications')
      .set({
        status: failed ? 'failed' : 'pending',
        attempt_count: attempts,
        next_attempt_at: failed ? null : sql<Date>`now() + ${`${retryMs} milliseconds`}::interval`,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        locked_until: null,
      })
      .where('notification_id', '=', id)
      .execute();
    this.logger.info({ notificationId: id, attempts, error: attempt.error }, 'inter webhook attempt failed');
  }

  private async post(
    url: string,
    body: string,
  ): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        dispatcher: this.agent,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, statusCode: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (err) {
      return { ok: false, statusCode: null, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
