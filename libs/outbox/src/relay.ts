import { sql, type Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { BusRegistryShape, StreamSpec } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { detached, fromCarrier } from '@payments/telemetry';
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
}

/**
 * Publishes outbox rows to JetStream, oldest first, and deletes them once the stream has stored
 * them. Rows are locked while being published (FOR UPDATE SKIP LOCKED), so several instances share
 * the work; if the relay dies after publishing but before deleting, the rows are published again and
 * JetStream drops them by their Nats-Msg-Id.
 */
export class OutboxRelay<DB extends OutboxDatabase = OutboxDatabase> {
  private readonly specs: Map<string, StreamSpec>;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private again = false;
  private readonly db: Kysely<OutboxDatabase>;
  private readonly bus: Bus<BusRegistryShape>;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;

  constructor(config: OutboxRelayConfig<DB>) {
    // Any service database that contains the outbox table (kysely's types are invariant in the table map).
    this.db = config.db as unknown as Kysely<OutboxDatabase>;
    this.bus = config.bus;
    this.logger = config.logger;
    this.batchSize = config.batchSize ?? 500;
    this.pollIntervalMs = config.pollIntervalMs ?? 250;
    this.specs = new Map(config.streams.map((s) => [s.name, s]));
  }

  start(): void {
    this.running = true;
    this.wake();
  }

  /** Publish now (called after a commit that enqueued something). */
  wake(): void {
    if (!this.running) return;
    if (this.cycle) {
      this.again = true;
      return;
    }
    // Detached: wake() is called from inside requests, whose trace must not adopt the relay's loop
    // (its queries, and through its timer every later cycle).
    this.cycle = detached(() =>
      this.drain().finally(() => {
        this.cycle = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule();
      }),
    );
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    while (this.cycle) await this.cycle;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), this.pollIntervalMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    try {
      // A short batch means the table is drained; a full one means there may be more.
      while (this.running && (await this.publishBatch()) >= this.batchSize);
    } catch (err) {
      this.logger.error({ err }, 'outbox relay failed; will retry');
    }
  }

  /** Publishes one batch; returns how many rows it handled. */
  private async publishBatch(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('outbox')
        .select(['id', 'stream', 'msg_id', 'trace_context'])
        // As stored text: published as it is, without parsing it into objects and serializing them again.
        .select(sql<string>`payload::text`.as('payload_json'))
        .orderBy('id')
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return 0;
      await Promise.all(
        rows.map((row) => {
          const spec = this.specs.get(row.stream);
          if (!spec) throw new Error(`outbox row ${row.id} names unknown stream ${row.stream}`);
          return this.bus.streams.publishJson(spec, row.payload_json, row.msg_id, {
            parent: fromCarrier(row.trace_context),
          });
        }),
      );
      await trx
        .deleteFrom('outbox')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      return rows.length;
    });
  }
}
