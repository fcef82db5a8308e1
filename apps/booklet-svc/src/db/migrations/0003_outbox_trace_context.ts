import type { Migration } from 'kysely';
import { outboxTraceContextMigration } from '@payments/outbox';

/** The outbox's trace context column (@payments/outbox). */
export const outboxTraceContext: Migration = outboxTraceContextMigration;
