import type { Migration } from 'kysely';
import { outboxMigration } from '@payments/outbox';

/** The outbox every service that publishes events keeps (@payments/outbox). */
export const outbox: Migration = outboxMigration;
