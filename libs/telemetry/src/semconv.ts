/**
 * Messaging attribute names of the OpenTelemetry semantic conventions. They are still "incubating",
 * so they are not in the stable entry of @opentelemetry/semantic-conventions; the incubating entry
 * loads thousands of constants, so the few used here are named once.
 */
export const MessagingAttributes = {
  system: 'messaging.system',
  destinationName: 'messaging.destination.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  messageId: 'messaging.message.id',
  bodySize: 'messaging.message.body.size',
  consumerGroup: 'messaging.consumer.group.name',
  batchCount: 'messaging.batch.message_count',
  /** Not in the conventions: the JetStream stream behind a subject. */
  natsStream: 'messaging.nats.stream',
  /** Not in the conventions: how many times JetStream has delivered this message. */
  natsDeliveryCount: 'messaging.nats.delivery_count',
} as const;
