import { randomUUID } from 'node:crypto';
import { connectBus, type Bus } from '@payments/bus';
import { Streams, type CallbackEventType, type CallbackRequest } from '@payments/contracts';
import { createLogger } from '@payments/logger';

/** A producer's side of the callback stream, as receivables-svc and booklet-svc publish to it. */
export class CallbackPublisher {
  private constructor(private readonly bus: Bus) {}

  static async connect(busPrefix: string): Promise<CallbackPublisher> {
    const bus = await connectBus({ url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', prefix: busPrefix, name: 'test-producer', logger: createLogger('test-producer', 'silent') });
    await bus.streams.ensure(Streams.callbackRequests);
    return new CallbackPublisher(bus);
  }

  request(tenantId: string, url: string, payload: Record<string, unknown> = { success: true, type: 'registered', accounts_receivable_id: randomUUID() }, eventType: CallbackEventType = 'receivable.registered'): CallbackRequest {
    return { event_id: `evt_${randomUUID().replace(/-/g, '')}`, tenant_id: tenantId, event_type: eventType, url, payload };
  }

  async publish(request: CallbackRequest): Promise<{ duplicate: boolean }> {
    return this.bus.streams.publish(Streams.callbackRequests, request, request.event_id);
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
