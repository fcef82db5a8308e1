import { sql, type Kysely, type Transaction } from 'kysely';
import { publishErrorText, type Bus } from '@payments/bus';
import type { BusRegistryShape, StreamSpec } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { detached, fromCarrier } from '@payments/telemetry';
import { outboxBacklogSummary } from './backlog';
import type { OutboxDatabase } from './outbox-table';

/** What an OutboxRelay publishes from, and to. */
export interface OutboxRelayConfig<DB extends OutboxDatabase = OutboxDatabase> {
  /** The service's database; it holds the `outbox` table. */
  readonly db: Kysely<DB>;
  /** Where the rows are published (JetStream). Any registry: rows are stored JSON, published as they are. */
  readonly bus: Bus<BusRegistryShape>;
  /** Every stream the service's outbox rows may name; a row naming another is an error. */
  readonly streams: readonly StreamSpec[];
  readonly logger: Logger;
  /** Rows published per transaction. Default: 500. */
  readonly batchSize?: number;
  /** How often the table is looked at when nothing wakes the relay. Default: 250 ms. */
  readonly pollIntervalMs?: number;
  /**
   * Cycles (select, publish, delete, commit) at once. A commit that wakes the relay while a cycle runs
   * starts another at once, which skips the rows the first has locked: a message waits for no other
   * message's cycle, only its own, however slow the database commits. Default: 2.
   */
  readonly cycles?: number;
  /**
   * OUTBOX_MAX_ROWS: the backlog an operator should never see; above 80% of it the relay logs a warning
   * (at most once a minute). A soft limit: nothing is refused. Default: 100,000.
   */
  readonly maxRows?: number;
}

/** A row that can never be published as it is (not the bus being away): it waits with a backoff, the others go on. */
class RowError extends Error {}

/** A failed row's next attempt: 1 s after its first failure, doubling, at most a minute. */
const MAX_ROW_BACKOFF_S = 60;
/** How often the backlog is checked against maxRows. */
const LIMIT_CHECK_MS = 60_000;

/**
 * A failure of this row alone: JetStream refused it (stream full, another stream expected: api_error),
 * it is over NATS's max_payload, or it names a stream the relay does not know. Anything else (connection
 * lost, timeout, no responders) is the bus's and affects every row alike.
 */
function isRowError(err: unknown): boolean {
  const e = err as { code?: string; api_error?: unknown };
  return err instanceof RowError || e?.code === 'MAX_PAYLOAD_EXCEEDED' || e?.api_error !== undefined;
}

/**
 * Publishes outbox rows to JetStream, oldest first, and deletes them once the stream has stored
 * them. Rows are locked while being published (FOR UPDATE SKIP LOCKED), so several instances share
 * the work; if the relay dies after publishing but before deleting, the rows are published again and
 * JetStream drops them by their Nats-Msg-Id. Up to `cycles` run at once (the same locks keep them
 * apart), so a row committed while a slow cycle runs is published without waiting for it to end; as
 * with several instances, rows are then not published strictly in id order. Each row succeeds or fails alone: a row that cannot be
 * published (isRowError) counts its attempts, keeps its last error and waits for its next attempt
 * (backoff), while the rows behind it are published and deleted. When the bus itself fails, rows are
 * left as they are and the relay tries again at its next cycle.
 */
export class OutboxRelay<DB extends OutboxDatabase = OutboxDatabase> {
  private readonly specs: Map<string, StreamSpec>;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  /** Cycles running now, at most maxCycles. */
  private readonly cycles = new Set<Promise<void>>();
  /** Woken while every cycle was taken: one more cycle once one ends. */
  private again = false;
  private readonly db: Kysely<OutboxDatabase>;
  private readonly bus: Bus<BusRegistryShape>;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly maxCycles: number;
  private readonly maxRows: number;
  private lastLimitCheck = 0;

  constructor(config: OutboxRelayConfig<DB>) {
    // Any service database that contains the outbox table (kysely's types are invariant in the table map).
    this.db = config.db as unknown as Kysely<OutboxDatabase>;
    this.bus = config.bus;
    this.logger = config.logger;
    this.batchSize = config.batchSize ?? 500;
    this.pollIntervalMs = config.pollIntervalMs ?? 250;
    this.maxCycles = Math.max(1, config.cycles ?? 2);
    this.maxRows = config.maxRows ?? 100_000;
    this.specs = new Map(config.streams.map((s) => [s.name, s]));
  }

  start(): void {
    this.running = true;
    this.wake();
  }

  /** Publish now (called after a commit that enqueued something). */
  wake(): void {
    if (!this.running) return;
    if (this.cycles.size >= this.maxCycles) {
      this.again = true;
      return;
    }
    // Detached: wake() is called from inside requests, whose trace must not adopt the relay's loop
    // (its queries, and through its timer every later cycle).
    const cycle: Promise<void> = detached(() =>
      this.drain().finally(() => {
        this.cycles.delete(cycle);
        if (this.again) {
          this.again = false;
          this.wake();
        } else if (this.cycles.size === 0) this.schedule();
      }),
    );
    this.cycles.add(cycle);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    while (this.cycles.size > 0) await Promise.all([...this.cycles]);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), this.pollIntervalMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    try {
      // A short batch means the table is drained; a full one means there may be more. A batch the bus
      // failed ends the cycle: the next one comes after the poll interval.
      for (;;) {
        if (!this.running) break;
        const batch = await this.publishBatch();
        if (batch.busError !== undefined) {
          this.logger.error({ err: batch.busError }, 'outbox relay could not publish; will retry');
          break;
        }
        if (batch.handled < this.batchSize) break;
      }
      await this.checkLimit();
    } catch (err) {
      this.logger.error({ err }, 'outbox relay failed; will retry');
    }
  }

  /** Publishes one batch of due rows; returns how many it handled, and the bus's error if it failed some of them. */
  private async publishBatch(): Promise<{ handled: number; busError?: unknown }> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('outbox')
        .select(['id', 'stream', 'msg_id', 'trace_context'])
        // As stored text: published as it is, without parsing it into objects and serializing them again.
        .select(sql<string>`payload::text`.as('payload_json'))
        .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', sql<Date>`now()`)]))
        .orderBy('id')
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return { handled: 0 };
      const results = await Promise.allSettled(
        rows.map(async (row) => {
          const spec = this.specs.get(row.stream);
          if (!spec) throw new RowError(`names stream ${row.stream}, which this service does not publish to`);
          await this.bus.streams.publishJson(spec, row.payload_json, row.msg_id, {
            parent: fromCarrier(row.trace_context),
          });
        }),
      );
      const published: string[] = [];
      let busError: unknown;
      for (const [i, result] of results.entries()) {
        const row = rows[i];
        if (result.status === 'fulfilled') published.push(row.id);
        else if (isRowError(result.reason)) await this.recordFailure(trx, row, result.reason);
        else busError ??= result.reason;
      }
      if (published.length > 0) await trx.deleteFrom('outbox').where('id', 'in', published).execute();
      return { handled: rows.length, busError };
    });
  }

  /** The row waits: one more attempt counted, its error kept, its next attempt after a backoff. */
  private async recordFailure(
    trx: Transaction<OutboxDatabase>,
    row: { id: string; stream: string; msg_id: string },
    err: unknown,
  ): Promise<void> {
    const error = publishErrorText(err).slice(0, 1_000);
    const updated = await trx
      .updateTable('outbox')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        last_error: error,
        next_attempt_at: sql<Date>`now() + make_interval(secs => least(${MAX_ROW_BACKOFF_S}, power(2, attempts)))`,
      }))
      .where('id', '=', row.id)
      .returning('attempts')
      .executeTakeFirst();
    this.logger.error(
      { outboxId: row.id, stream: row.stream, msgId: row.msg_id, attempts: updated?.attempts, error },
      'outbox row could not be published; it waits, the rows behind it go on',
    );
  }

  /** Above 80% of OUTBOX_MAX_ROWS: a warning, at most once a minute. */
  private async checkLimit(): Promise<void> {
    if (Date.now() - this.lastLimitCheck < LIMIT_CHECK_MS) return;
    this.lastLimitCheck = Date.now();
    const backlog = await outboxBacklogSummary(this.db);
    if (backlog.rows >= this.maxRows * 0.8)
      this.logger.warn(
        { ...backlog, maxRows: this.maxRows },
        'outbox backlog above 80% of OUTBOX_MAX_ROWS: is the bus taking messages?',
      );
  }
}
