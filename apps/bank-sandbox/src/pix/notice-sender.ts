import { sql } from 'kysely';
import { Agent, request } from 'undici';
import type { Logger } from '@payments/logger';
import type { NoticeSettings, SenderIdentity } from '../inter/notice-sender';
import type { PixDb } from './db';
import type { PixBank } from './pix-bank';

const BATCH = 20;

/**
 * The PIX API's clock and postman, on the Inter dialect's settings: on each beat it removes the cobvs
 * past their validity, and POSTs each due notice (`{ pix: [...] }`) to `<webhookUrl>/pix`, presenting
 * the sandbox's certificate (the standard's webhooks are called over mutual TLS). A refused notice is
 * retried on the same schedule as the Inter notices and given up after the last retry.
 */
export class PixNoticeSender {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly agent: Agent;

  constructor(
    private readonly db: PixDb,
    private readonly bank: PixBank,
    private readonly settings: NoticeSettings,
    private readonly logger: Logger,
    identity: SenderIdentity,
  ) {
    this.agent = new Agent({ connect: { cert: identity.certPem, key: identity.keyPem } });
  }

  start(): void {
    this.schedule(0);
  }

  wake(): void {
    if (!this.stopped) this.schedule(0);
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
        .catch((err: unknown) => this.logger.error({ err }, 'pix notice pass failed'))
        .finally(() => {
          this.running = null;
          this.schedule(this.settings.pollMs);
        });
    }, delayMs);
  }

  private async pass(): Promise<void> {
    await this.bank.tick();
    const lease = new Date(Date.now() + this.settings.timeoutMs + 5_000);
    const due = await this.db
      .updateTable('pix_notifications')
      .set({ locked_until: lease })
      .where(
        'notification_id',
        'in',
        this.db
          .selectFrom('pix_notifications')
          .select('notification_id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', new Date())
          .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', new Date())]))
          .orderBy('next_attempt_at')
          .limit(BATCH),
      )
      .returningAll()
      .execute();
    await Promise.all(due.map((n) => this.deliver(n)));
  }

  private async deliver(notice: {
    notification_id: string;
    client_id: string;
    url: string;
    body: string;
    attempt_count: number;
  }) {
    const client = await this.db
      .selectFrom('inter_clients')
      .select('account')
      .where('client_id', '=', notice.client_id)
      .executeTakeFirstOrThrow();
    // Inter names the receiving account in x-conta-corrente; the standard's receivers ignore the header.
    const attempt = await this.post(notice.url, notice.body, client.account.replace(/^0+/, ''));
    const attempts = notice.attempt_count + 1;
    const retryMs = this.settings.retryMs[attempts - 1];
    const givenUp = !attempt.ok && retryMs === undefined;
    await this.db
      .updateTable('pix_notifications')
      .set({
        status: attempt.ok ? 'delivered' : givenUp ? 'failed' : 'pending',
        attempt_count: attempts,
        delivered_at: attempt.ok ? new Date() : null,
        next_attempt_at: attempt.ok || givenUp ? null : sql<Date>`now() + ${`${retryMs} milliseconds`}::interval`,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        locked_until: null,
      })
      .where('notification_id', '=', notice.notification_id)
      .execute();
    if (!attempt.ok)
      this.logger.info(
        { notificationId: notice.notification_id, attempts, givenUp, error: attempt.error },
        'pix notice refused',
      );
  }

  private async post(
    url: string,
    body: string,
    account: string,
  ): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-conta-corrente': account },
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
