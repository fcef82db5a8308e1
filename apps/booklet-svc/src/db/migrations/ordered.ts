import type { Migration } from 'kysely';
import { booklets } from './0001_booklets';
import { outbox } from './0002_outbox';
import { outboxTraceContext } from './0003_outbox_trace_context';
import { outboxRetry } from './0004_outbox_retry';
import { paymentSlipIdAsSent } from './0005_payment_slip_id_as_sent';
import { bookletPdfs } from './0006_booklet_pdfs';
import { bookletsAutovacuum } from './0007_booklets_autovacuum';
import { emptyBookletFiles } from './0008_empty_booklet_files';
import { dropBookletFiles } from './0009_drop_booklet_files';

/** The schema's migrations in the order they run, one file each, named after its key. */
export const migrations: Record<string, Migration> = {
  '0001_booklets': booklets,
  '0002_outbox': outbox,
  '0003_outbox_trace_context': outboxTraceContext,
  '0004_outbox_retry': outboxRetry,
  '0005_payment_slip_id_as_sent': paymentSlipIdAsSent,
  '0006_booklet_pdfs': bookletPdfs,
  '0007_booklets_autovacuum': bookletsAutovacuum,
  '0008_empty_booklet_files': emptyBookletFiles,
  '0009_drop_booklet_files': dropBookletFiles,
};
