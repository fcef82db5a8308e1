import { Streams, Subjects, type ClientsLookupReply, type RegistrationJob } from '@payments/contracts';
import type { Bus } from '../src';

/**
 * The system's bus takes payload, reply and message types from the subject or stream (BusRegistry in
 * libs/contracts). Checked by the type-check (`tsc -p libs/bus`), where each @ts-expect-error must meet
 * an error; never called.
 */
export function typedCalls(bus: Bus): void {
  const lookup: Promise<ClientsLookupReply> = bus.request(Subjects.clients.lookup, { tenant_id: 't', client_ids: [] });
  void lookup;
  // @ts-expect-error the payload of another subject
  void bus.request(Subjects.clients.lookup, { tenant_id: 't', payment_slip_id: 'p' });
  // @ts-expect-error a subject the registry does not list
  void bus.request('clients.delete', { tenant_id: 't' });

  bus.serve(Subjects.tenants.profile, async (cmd) => ({ name: cmd.tenant_id }), { queue: 'q' });
  // @ts-expect-error a reply of the wrong shape
  bus.serve(Subjects.tenants.profile, async () => ({ title: 'x' }), { queue: 'q' });

  const job: RegistrationJob = { tenant_id: 't', receivable_ids: ['r'] };
  void bus.streams.publish(Streams.receivableRegistrations, job, 'reg_r');
  // @ts-expect-error the message of another stream
  void bus.streams.publish(Streams.receivableRegistrations, { tenant_id: 't', booklet_id: 'b' }, 'booklet_b');
  void bus.streams.consumeEach(Streams.bookletBuilds, async (build) => (build.booklet_id ? 'done' : { retryInMs: 1 }));
}

it('types bus calls from the registry (see the type-check)', () => {
  expect(typeof typedCalls).toBe('function');
});
