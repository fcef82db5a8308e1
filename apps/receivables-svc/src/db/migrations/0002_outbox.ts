/** The transactional outbox's own migration, as @payments/outbox keeps it for every service. */
export { outboxMigration as outbox } from '@payments/outbox';
