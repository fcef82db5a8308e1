import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import type { BusRegistryShape, StreamSpec } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { outboxMigration, outboxRetryMigration, outboxTraceContextMigration, type OutboxDatabase } from '../src';

export interface OutboxFixture<R extends BusRegistryShape> {
  db: Kysely<OutboxDatabase>;
  bus: Bus<R>;
  stop(): Promise<void>;
}

/**
 * A throw-away database with the outbox migrated, and a bus with `spec`'s stream under a random prefix;
 * R is the test's bus registry (its stream's message type).
 */
export async function startOutboxFixture<R extends BusRegistryShape>(
  name: string,
  spec: StreamSpec,
): Promise<OutboxFixture<R>> {
  const logger = createLogger(name, 'silent');
  const test = await createTestDatabase();
  const db = createDatabase<OutboxDatabase>({ url: test.url, schema: 'svc' });
  await migrateToLatest(db, 'svc', {
    '0001_outbox': outboxMigration,
    '0002_outbox_trace_context': outboxTraceContextMigration,
    '0003_outbox_retry': outboxRetryMigration,
  });
  const bus = await connectBus<R>({
    url: 'nats://127.0.0.1:4222',
    prefix: `t${randomBytes(4).toString('hex')}`,
    name,
    logger,
  });
  await bus.streams.provision(spec);
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
