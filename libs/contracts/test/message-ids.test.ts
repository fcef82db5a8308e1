import { messageIds, type CallbackRequest } from '../src';

// Each format is pinned: an id that changes between versions lets a message republished across a
// rolling upgrade through twice (JetStream de-duplicates by equal Nats-Msg-Id only).
const receivableId = '0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d';
const request = (eventId: string): CallbackRequest => ({
  event_id: eventId,
  tenant_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  event_type: 'receivable.paid',
  url: 'https://erp.example/callbacks',
  payload: {},
});

it('names a registration job after its first receivable', () => {
  const job = { tenant_id: 't', receivable_ids: [receivableId, 'other'] };
  expect(messageIds.registrationJob(job)).toBe(`reg_${receivableId}`);
});

it('names a requested cancellation by receivable and request number, a cleanup by receivable', () => {
  expect(messageIds.cancellationRequest(receivableId, 1)).toBe(`cancel_${receivableId}_1`);
  expect(messageIds.cancellationRequest(receivableId, 2)).toBe(`cancel_${receivableId}_2`);
  expect(messageIds.cancellationCleanup(receivableId)).toBe(`cleanup_${receivableId}`);
});

it('names a booklet build after the booklet', () => {
  expect(messageIds.bookletBuild(receivableId)).toBe(`booklet_${receivableId}`);
});

it('names a callback batch after its first event, with its size when it holds several', () => {
  expect(messageIds.callbackBatch({ requests: [request('evt_paid_abc')] })).toBe('evt_paid_abc');
  expect(messageIds.callbackBatch({ requests: [request('evt_a'), request('evt_b'), request('evt_c')] })).toBe(
    'evt_a+3',
  );
});
