export {
  outboxMigration,
  outboxTraceContextMigration,
  outboxRetryMigration,
  type OutboxTable,
  type OutboxDatabase,
} from './outbox-table';
export { enqueue, enqueueStatement, type EnqueueCondition, type OutboxMessage } from './enqueue';
export { OutboxRelay, type OutboxRelayConfig } from './relay';
export { outboxBacklog, outboxBacklogSummary, type OutboxBacklogSummary } from './backlog';
