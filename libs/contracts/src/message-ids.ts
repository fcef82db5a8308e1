import type { CallbackRequestBatch } from './callbacks';
import type { RegistrationJob } from './streams';

/**
 * The Nats-Msg-Id of every message published on the streams, built here and nowhere else. An id is
 * stable per logical message, so JetStream drops a message published twice inside the stream's
 * de-duplication window (an outbox relay that died between publishing a row and deleting it).
 *
 * The formats are part of the wire: an instance of the old version and one of the new may publish
 * the same row during a rolling upgrade, and only the same id lets the second copy be dropped. Do not
 * change them; libs/contracts/test/message-ids.test.ts pins each one.
 */
export const messageIds = {
  /** A registration job (Streams.receivableRegistrations), named after its first receivable: `reg_<id>`. */
  registrationJob: (job: RegistrationJob): string => `reg_${job.receivable_ids[0]}`,

  /** The cancellation an ERP requested, by the receivable's request count (1 for the first): `cancel_<id>_<n>`. */
  cancellationRequest: (receivableId: string, requestNumber: number): string =>
    `cancel_${receivableId}_${requestNumber}`,

  /** The quiet cancellation of a charge registered after its receivable was cancelled: `cleanup_<id>`. */
  cancellationCleanup: (receivableId: string): string => `cleanup_${receivableId}`,

  /** A booklet build (Streams.bookletBuilds): `booklet_<booklet id>`. */
  bookletBuild: (bookletId: string): string => `booklet_${bookletId}`,

  /** A batch of callback requests: its first event id, plus `+<count>` when it holds several. */
  callbackBatch: (batch: CallbackRequestBatch): string => {
    const first = batch.requests[0].event_id;
    return batch.requests.length === 1 ? first : `${first}+${batch.requests.length}`;
  },
} as const;
