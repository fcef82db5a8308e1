/** The transactional outbox's own migration, as @payments/outbox keeps it for every service. */
export { outboxTraceContextMigration as outboxTraceContext } from '@payments/outbox';
