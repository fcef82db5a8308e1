/** The transactional outbox's own migration, as @payments/outbox keeps it for every service. */
export { outboxRetryMigration as outboxRetry } from '@payments/outbox';
