import { PassThrough } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import {
  messageIds,
  Streams,
  type BookletFailedCallback,
  type BookletJob,
  type BookletSentCallback,
  type CallbackRequest,
  type JobOutcome,
} from '@payments/contracts';
import { enqueue, type OutboxMessage } from '@payments/outbox';
import type { BookletRow, BookletsDatabase } from '../db/schema';
import {
  awaitsRegistration,
  bookletDocument,
  bookletInstallments,
  legacyPayeeParty,
  payeeParty,
} from './booklet-contents';
import type { BookletDocument } from './booklet-document';
import { renderBooklet } from './booklet-pdf';
import type { DownloadLinks, InstallmentSource, PdfStore } from './ports';

export interface BuilderDeps {
  db: Kysely<BookletsDatabase>;
  source: InstallmentSource;
  store: PdfStore;
  links: DownloadLinks;
  logger: Logger;
  /** How long a booklet waits for its installments' registration before it fails. */
  maxWaitMs: number;
}

/**
 * Builds a queued booklet: waits (by retrying the job) while some payable installment is not registered
 * yet, then renders the PDF (pending and paid installments, by due date, paid to the installments'
 * beneficiary), stores it and queues the "sent" callback with the signed download link and the number
 * of installments. A build that cannot succeed queues the failure callback instead.
 */
export async function buildBooklet(deps: BuilderDeps, job: BookletJob): Promise<JobOutcome> {
  const booklet = await deps.db
    .selectFrom('booklets')
    .selectAll()
    .where('id', '=', job.booklet_id)
    .where('tenant_id', '=', job.tenant_id)
    .executeTakeFirst();
  if (!booklet || booklet.status !== 'queued') return 'done';
  const contents = await currentContents(deps.source, booklet);
  if (contents.kind === 'empty')
    return finish(deps, booklet, {
      failure: { code: 'no_installments', message: 'every installment of this booklet was cancelled or rejected' },
    });
  if (contents.kind === 'waiting') {
    if (Date.now() - booklet.created_at.getTime() > deps.maxWaitMs) {
      return finish(deps, booklet, {
        failure: {
          code: 'registration_pending',
          message: 'some installments are still not registered with the provider',
        },
      });
    }
    return { retryInMs: 2_000 };
  }
  let pdf: Buffer;
  let pageCount: number;
  try {
    ({ pdf, pageCount } = await renderToBuffer(contents.doc));
  } catch (err) {
    deps.logger.error({ err, bookletId: booklet.id }, 'booklet rendering failed');
    return finish(deps, booklet, { failure: { code: 'render_failed', message: 'the booklet PDF could not be built' } });
  }
  const installmentCount = contents.doc.installments.length;
  await deps.store.put(booklet.id, pdf);
  return finish(deps, booklet, { installmentCount, pageCount });
}

/** What a booklet would print now: its document, nothing (all cancelled or rejected), or not yet. */
export type BookletContents = { kind: 'document'; doc: BookletDocument } | { kind: 'empty' } | { kind: 'waiting' };

/**
 * The booklet's document from its stored request (tenant and payment slip) and its installments as
 * receivables-svc has them now: pending and paid ones by due date, paid to the installments'
 * beneficiary. Waiting while a payable installment is not registered yet.
 */
export async function currentContents(source: InstallmentSource, booklet: BookletRow): Promise<BookletContents> {
  const reply = await source.installments(booklet.tenant_id, booklet.payment_slip_id);
  const installments = bookletInstallments(reply.installments);
  if (installments.length === 0) return { kind: 'empty' };
  if (installments.some(awaitsRegistration)) return { kind: 'waiting' };
  const payee = reply.payee ? payeeParty(reply.payee) : legacyPayeeParty(await source.payeeName(booklet.tenant_id));
  return { kind: 'document', doc: bookletDocument(booklet.payment_slip_id_as_sent, payee, installments) };
}

export async function renderToBuffer(doc: BookletDocument): Promise<{ pdf: Buffer; pageCount: number }> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    sink.on('end', resolve);
    sink.on('error', reject);
  });
  // Await both together: a failed render also rejects `ended`, which must not go unhandled.
  const [{ pageCount }] = await Promise.all([renderBooklet(doc, sink), ended]);
  return { pdf: Buffer.concat(chunks), pageCount };
}

type Result = { installmentCount: number; pageCount: number } | { failure: { code: string; message: string } };

async function finish(deps: BuilderDeps, booklet: BookletRow, result: Result): Promise<'done'> {
  await deps.db.transaction().execute(async (trx) => {
    const failed = 'failure' in result;
    const updated = await trx
      .updateTable('booklets')
      .set({
        status: failed ? 'failed' : 'ready',
        installment_count: failed ? null : result.installmentCount,
        page_count: failed ? null : result.pageCount,
        error: failed ? `${result.failure.code}: ${result.failure.message}` : null,
        finished_at: new Date(),
      })
      .where('id', '=', booklet.id)
      .where('status', '=', 'queued')
      .returning('id')
      .executeTakeFirst();
    if (!updated) return;
    await enqueue(trx, [
      failed
        ? failedCallback(booklet, result.failure)
        : sentCallback(booklet, deps.links(booklet.id), result.installmentCount),
    ]);
  });
  return 'done';
}

function callback(
  booklet: BookletRow,
  eventType: CallbackRequest['event_type'],
  payload: CallbackRequest['payload'],
): OutboxMessage {
  const eventId = `evt_booklet_${booklet.id.replace(/-/g, '')}`;
  const request: CallbackRequest = {
    event_id: eventId,
    tenant_id: booklet.tenant_id,
    event_type: eventType,
    url: booklet.url_callback,
    payload,
  };
  const batch = { requests: [request] };
  return { stream: Streams.callbackRequests, msgId: messageIds.callbackBatch(batch), payload: batch };
}

function sentCallback(booklet: BookletRow, download: string, installments: number): OutboxMessage {
  const payload: BookletSentCallback = {
    success: true,
    type: 'sent',
    payment_slip_id: booklet.payment_slip_id_as_sent,
    download,
    installments,
  };
  return callback(booklet, 'booklet.sent', payload);
}

function failedCallback(booklet: BookletRow, error: { code: string; message: string }): OutboxMessage {
  const payload: BookletFailedCallback = {
    success: false,
    type: 'sent',
    payment_slip_id: booklet.payment_slip_id_as_sent,
    error,
  };
  return callback(booklet, 'booklet.failed', payload);
}
