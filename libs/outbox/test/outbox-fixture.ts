import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { outboxMigration, outboxTraceContextMigration, type OutboxDatabase } from '../src';

export interface OutboxFixture {
  db: Kysely<OutboxDatabase>;
  bus: Bus;
  stop(): Promise<void>;
}

/** A throw-away database with the outbox migrated, and a bus with `spec`'s stream under a random prefix. */
export async function startOutboxFixture(name: string, spec: StreamSpec): Promise<OutboxFixture> {
  const logger = createLogger(name, 'silent');
  const test = await createTestDatabase();
  const db = createDatabase<OutboxDatabase>({ url: test.url, schema: 'svc' });
  await migrateToLatest(db, 'svc', {
    '0001_outbox': outboxMigration,
    '0002_outbox_trace_context': outboxTraceContextMigration,
  });
  const bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    prefix: `t${randomBytes(4).toString('hex')}`,
    name,
    logger,
  });
  await bus.streams.ensure(spec);
  return {
    db,
    bus,
    async stop() {
      const jsm = await bus.connection.jetstreamManager();
      await jsm.streams.delete(bus.streams.streamName(spec)).catch(() => undefined);
      await bus.close();
      await db.destroy();
      await test.drop();
    },
  };
}
