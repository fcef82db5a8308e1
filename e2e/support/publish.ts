import { randomUUID } from 'node:crypto';
import { connectBus, type Bus } from '@payments/bus';
import {
  batchCallbackRequests,
  messageIds,
  Streams,
  type CallbackEventType,
  type CallbackRequest,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';

/** A producer's side of the callback stream, as receivables-svc and booklet-svc publish to it. */
export class CallbackPublisher {
  private constructor(private readonly bus: Bus) {}

  /** `url`: the system's NATS (its env's NATS_URL), default NATS_URL, else the local one. */
  static async connect(
    busPrefix: string,
    url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  ): Promise<CallbackPublisher> {
    const bus = await connectBus({
      url,
      prefix: busPrefix,
      name: 'test-producer',
      logger: createLogger('test-producer', 'silent'),
    });
    await bus.streams.provision(Streams.callbackRequests);
    return new CallbackPublisher(bus);
  }

  request(
    tenantId: string,
    url: string,
    payload: Record<string, unknown> = { success: true, type: 'registered', accounts_receivable_id: randomUUID() },
    eventType: CallbackEventType = 'receivable.registered',
  ): CallbackRequest {
    return {
      event_id: `evt_${randomUUID().replace(/-/g, '')}`,
      tenant_id: tenantId,
      event_type: eventType,
      url,
      payload,
    };
  }

  /** Publishes one request, in a batch of its own (as a payment or a cancellation causes it). */
  async publish(request: CallbackRequest): Promise<{ duplicate: boolean }> {
    const batch = { requests: [request] };
    return this.bus.streams.publish(Streams.callbackRequests, batch, messageIds.callbackBatch(batch));
  }

  /** Publishes requests in as few batches as they fit, as a registration job does. */
  async publishBatch(requests: CallbackRequest[]): Promise<void> {
    for (const { msgId, batch } of batchCallbackRequests(requests)) await this.publishRaw(batch, msgId);
  }

  /** Publishes any message on the stream, well-formed or not (as JSON, unchecked against the registry). */
  async publishRaw(message: unknown, msgId: string): Promise<{ duplicate: boolean }> {
    return this.bus.streams.publishJson(Streams.callbackRequests, JSON.stringify(message), msgId);
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
