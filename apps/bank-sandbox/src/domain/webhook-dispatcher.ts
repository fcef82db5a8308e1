import { sql, type Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import type { BankSandboxDatabase, NotificationRow } from '../db/schema';
import { signSandboxWebhook, webhookSigner } from './webhook-signature';

/** Where payment webhooks go and how they are retried: BANK_SANDBOX_WEBHOOK_<FIELD> for each field. */
export interface WebhookSettings {
  url: string;
  secret: string;
  /** Delays after each failed attempt; the last one repeats until maxAttempts. */
  retryMs: number[];
  /** After this many failed attempts the notification is kept as failed. */
  maxAttempts: number;
  timeoutMs: number;
  /** How often the queue is looked at (a payment also wakes it at once). */
  pollMs: number;
}

/** What one POST of a notification came to. `statusCode` is null when no HTTP answer came. */
export interface WebhookAttempt {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/**
 * The dispatcher's view of HTTP: a port, so that the domain knows no HTTP client (transport/http/webhook-poster.ts
 * implements it with fetch).
 */
export interface WebhookPoster {
  /** POSTs one notification with the given headers; never throws, a network failure is an attempt too. */
  post(url: string, body: string, headers: Record<string, string>): Promise<WebhookAttempt>;
}

/**
 * The dispatcher's view of tracing: a port, so that the domain knows no tracing library
 * (transport/http/otel-webhook-tracing.ts implements it with OpenTelemetry).
 */
export interface WebhookTracing {
  /** Runs `work` in the trace context stored with a notification (outside any trace when there is none). */
  inStoredContext<T>(traceContext: Record<string, string> | null, work: () => T): T;
  /** Runs `work` outside whatever trace is active. */
  detached<T>(work: () => T): T;
}

/** What a WebhookDispatcher works with. */
export interface WebhookDispatcherConfig {
  /** The bank sandbox's database: table `notifications` is the queue. */
  readonly db: Kysely<BankSandboxDatabase>;
  /** Where notifications go, signed with what, and how they are retried. */
  readonly webhook: WebhookSettings;
  readonly logger: Logger;
  /** Sends one POST (transport/http/webhook-poster.ts). */
  readonly poster: WebhookPoster;
  /** Runs each attempt in the trace of the payment it reports (transport/http/otel-webhook-tracing.ts). */
  readonly tracing: WebhookTracing;
  /** The time an attempt is signed at (tests move it); the system clock by default. */
  readonly now?: () => Date;
}

/** Up to this many notifications are claimed per pass. */
const BATCH = 20;

/** Delay before attempt n+1 after n failures (n >= 1). */
export function retryDelayMs(retryMs: number[], failures: number): number {
  return retryMs[Math.min(failures, retryMs.length) - 1] ?? 0;
}

/**
 * Delivers the payment webhooks kept in table `notifications`: the table is the queue, so pending
 * notifications survive a restart and are resumed. Each pass claims the due ones (a lease keeps a
 * slow attempt from being started twice), POSTs them signed (Standard Webhooks, the same webhook-id on
 * every attempt, each signed with its own timestamp), and records success or the next attempt.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private wakeRequested = false;
  private stopped = false;

  private readonly db: Kysely<BankSandboxDatabase>;
  private readonly webhook: WebhookSettings;
  private readonly logger: Logger;
  private readonly poster: WebhookPoster;
  private readonly tracing: WebhookTracing;
  /** The HMAC key of the webhook secret. */
  private readonly signer: Buffer;
  private readonly now: () => Date;

  constructor(config: WebhookDispatcherConfig) {
    this.db = config.db;
    this.webhook = config.webhook;
    this.logger = config.logger;
    this.poster = config.poster;
    this.tracing = config.tracing;
    this.signer = webhookSigner(config.webhook.secret);
    this.now = config.now ?? (() => new Date());
  }

  start(): void {
    this.schedule(0);
  }

  /** Look at the queue now (a payment was just recorded). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }

  /** Stops polling and waits for the attempts in flight (each bounded by timeoutMs). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // Detached: wake() runs inside a pay request; without this its trace would adopt this timer, and
    // through it every later pass (and their queries) for as long as the process lives.
    this.timer = this.tracing.detached(() =>
      setTimeout(() => {
        this.timer = null;
        this.running = this.pass()
          .catch((err: unknown) => this.logger.warn({ err }, 'webhook pass failed'))
          .finally(() => {
            this.running = null;
            const again = this.wakeRequested;
            this.wakeRequested = false;
            this.schedule(again ? 0 : this.webhook.pollMs);
          });
      }, delayMs),
    );
  }

  private async pass(): Promise<void> {
    for (;;) {
      const due = await this.claimDue();
      await Promise.all(due.map((n) => this.attempt(n)));
      if (due.length < BATCH || this.stopped) return;
    }
  }

  private async claimDue(): Promise<NotificationRow[]> {
    const leaseMs = this.webhook.timeoutMs + 10_000;
    const result = await sql<NotificationRow>`
      update notifications set locked_until = now() + ${leaseMs} * interval '1 millisecond'
      where event_id in (
        select event_id from notifications
        where status = 'pending' and next_attempt_at <= now() and (locked_until is null or locked_until < now())
        order by next_attempt_at
        limit ${BATCH}
        for update skip locked)
      returning *`.execute(this.db);
    return result.rows;
  }

  private async attempt(notification: NotificationRow): Promise<void> {
    // In the payment's trace: the webhook (and what receivables-svc does with it) joins it.
    const outcome = await this.tracing.inStoredContext(notification.trace_context, () => this.post(notification));
    const attempts = notification.attempt_count + 1;
    if (outcome.ok) {
      await this.db
        .updateTable('notifications')
        .set({
          status: 'delivered',
          attempt_count: attempts,
          delivered_at: new Date(),
          locked_until: null,
          next_attempt_at: null,
          last_status_code: outcome.statusCode,
          last_error: null,
        })
        .where('event_id', '=', notification.event_id)
        .execute();
      this.logger.info(
        { eventId: notification.event_id, chargeId: notification.charge_id, attempts },
        'payment webhook delivered',
      );
      return;
    }
    const givingUp = attempts >= this.webhook.maxAttempts;
    const delay = retryDelayMs(this.webhook.retryMs, attempts);
    await this.db
      .updateTable('notifications')
      .set({
        status: givingUp ? 'failed' : 'pending',
        attempt_count: attempts,
        next_attempt_at: givingUp ? null : new Date(Date.now() + delay),
        locked_until: null,
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
      })
      .where('event_id', '=', notification.event_id)
      .execute();
    this.logger.warn(
      {
        eventId: notification.event_id,
        chargeId: notification.charge_id,
        attempts,
        statusCode: outcome.statusCode,
        error: outcome.error,
        retryInMs: givingUp ? null : delay,
      },
      givingUp ? 'payment webhook failed: giving up' : 'payment webhook failed: will retry',
    );
  }

  /** Signed now, not when the payment was recorded: a retry hours later must not look stale to the receiver. */
  private post(notification: NotificationRow): Promise<WebhookAttempt> {
    return this.poster.post(
      this.webhook.url,
      notification.body,
      signSandboxWebhook(this.signer, notification.event_id, notification.body, this.now()),
    );
  }
}
