import type { Migration } from 'kysely';
import { outboxRetryMigration } from '@payments/outbox';

/** The outbox's retry columns (@payments/outbox). */
export const outboxRetry: Migration = outboxRetryMigration;
