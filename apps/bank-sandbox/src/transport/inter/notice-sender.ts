import { randomUUID } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import { Agent, request } from 'undici';
import type { Logger } from '@payments/logger';
import type { InterNotificationsTable } from '../../db/inter';
import type { PixDatabase, PixDb, PixNotificationsTable } from '../../db/pix';

export interface NoticeSettings {
  /** Delays before each retry of a refused notice (Inter: 20, 30, 60, 120 minutes); then it is given up. */
  retryMs: number[];
  timeoutMs: number;
  /** How often the bank's clock runs (issue, expire, send what is due). */
  pollMs: number;
}

/** The certificate the bank presents when the webhook URL is https (Inter authenticates its calls by mutual TLS). */
export interface SenderIdentity {
  certPem: string;
  keyPem: string;
}

/** A notice as its queue holds it, in either dialect. */
export type QueuedNotice = Selectable<InterNotificationsTable> | Selectable<PixNotificationsTable>;

export interface DeliveryAttempt {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** What differs between the dialects' postmen: their queue, their clock, and what an attempt leaves behind. */
export interface NoticeDialect {
  /** Names the dialect in the log. */
  name: 'inter' | 'pix';
  table: 'inter_notifications' | 'pix_notifications';
  /** The bank's clock, run before each look at the queue. */
  tick(): Promise<void>;
  /** Keeps an attempt (in the transaction that records its outcome on the notice). */
  recordAttempt?(
    trx: Transaction<PixDatabase>,
    notice: QueuedNotice,
    attempt: DeliveryAttempt & { number: number; firedAt: Date },
  ): Promise<void>;
}

const BATCH = 20;

/**
 * A dialect's clock and postman: on each beat it runs the bank's clock, then POSTs each due notice
 * (header x-conta-corrente) to its URL, presenting the sandbox's certificate. A refused notice is
 * retried on Inter's schedule and given up after the last retry. Unsigned, as Inter's are.
 */
export class NoticeSender {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly agent: Agent;

  constructor(
    private readonly db: PixDb,
    private readonly dialect: NoticeDialect,
    private readonly settings: NoticeSettings,
    private readonly logger: Logger,
    identity: SenderIdentity,
  ) {
    this.agent = new Agent({ connect: { cert: identity.certPem, key: identity.keyPem } });
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks at the queue now (a notice was just recorded). */
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
        .catch((err: unknown) => this.logger.error({ err }, `${this.dialect.name} notice pass failed`))
        .finally(() => {
          this.running = null;
          this.schedule(this.settings.pollMs);
        });
    }, delayMs);
  }

  private async pass(): Promise<void> {
    await this.dialect.tick();
    const lease = new Date(Date.now() + this.settings.timeoutMs + 5_000);
    const due = await this.db
      .updateTable(this.dialect.table)
      .set({ locked_until: lease })
      .where(
        'notification_id',
        'in',
        this.db
          .selectFrom(this.dialect.table)
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

  private async deliver(notice: QueuedNotice): Promise<void> {
    const client = await this.db
      .selectFrom('inter_clients')
      .select('account')
      .where('client_id', '=', notice.client_id)
      .executeTakeFirstOrThrow();
    const firedAt = new Date();
    // Inter names the receiving account in x-conta-corrente; the standard's receivers ignore the header.
    const attempt = await this.post(notice.url, notice.body, client.account.replace(/^0+/, ''));
    const attempts = notice.attempt_count + 1;
    const retryMs = this.settings.retryMs[attempts - 1];
    const givenUp = !attempt.ok && retryMs === undefined;
    await this.db.transaction().execute(async (trx) => {
      await this.dialect.recordAttempt?.(trx, notice, { ...attempt, number: attempts, firedAt });
      await trx
        .updateTable(this.dialect.table)
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
    });
    if (!attempt.ok)
      this.logger.info(
        { notificationId: notice.notification_id, attempts, givenUp, error: attempt.error },
        `${this.dialect.name} notice refused`,
      );
  }

  private async post(url: string, body: string, account: string): Promise<DeliveryAttempt> {
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

/**
 * The Inter dialect's notices: a JSON array of CallbackCobranca to the URL its client registered; its
 * clock issues the charges due and records expiries, and every attempt is kept as a row of the
 * webhook callback history.
 */
export function interNoticeDialect(bank: { tick(): Promise<void> }): NoticeDialect {
  return {
    name: 'inter',
    table: 'inter_notifications',
    tick: () => bank.tick(),
    recordAttempt: async (trx, notice, attempt) => {
      if (!('codigo_solicitacao' in notice)) throw new Error('not an Inter notice');
      await trx
        .insertInto('inter_notice_attempts')
        .values({
          attempt_id: randomUUID(),
          notification_id: notice.notification_id,
          client_id: notice.client_id,
          codigo_solicitacao: notice.codigo_solicitacao,
          webhook_url: notice.url,
          payload: notice.body,
          attempt_number: attempt.number,
          fired_at: attempt.firedAt,
          success: attempt.ok,
          http_status: attempt.statusCode,
          error_message: attempt.error,
        })
        .execute();
    },
  };
}
