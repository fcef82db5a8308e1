import type { Migration } from 'kysely';
import { receivables } from './0001_receivables';
import { outbox } from './0002_outbox';
import { outboxTraceContext } from './0003_outbox_trace_context';
import { providerAccounts } from './0004_provider_accounts';
import { paymentsNeedingRefund } from './0005_payments_needing_refund';
import { outboxRetry } from './0006_outbox_retry';
import { erpIdsAsSent } from './0007_erp_ids_as_sent';
import { registrationStats } from './0008_registration_stats';
import { registrationMarks } from './0009_registration_marks';
import { bankCallBudgets } from './0010_bank_call_budgets';
import { bankNoticesAndReconciliation } from './0011_bank_notices_and_reconciliation';
import { registrationWaits } from './0012_registration_waits';
import { bankNoticeRefunds } from './0013_bank_notice_refunds';
import { pixProviderAccounts } from './0014_pix_provider_accounts';
import { stateHistoryByMonth } from './0015_state_history_by_month';
import { stateCounts } from './0016_state_counts';
import { autovacuumPerTable } from './0017_autovacuum_per_table';
import { searchFilters } from './0018_search_filters';
import { noticeQueueApartFromLog } from './0019_notice_queue_apart_from_log';

/** The schema's migrations in the order they run, one file each, named after its key. */
export const migrations: Record<string, Migration> = {
  '0001_receivables': receivables,
  '0002_outbox': outbox,
  '0003_outbox_trace_context': outboxTraceContext,
  '0004_provider_accounts': providerAccounts,
  '0005_payments_needing_refund': paymentsNeedingRefund,
  '0006_outbox_retry': outboxRetry,
  '0007_erp_ids_as_sent': erpIdsAsSent,
  '0008_registration_stats': registrationStats,
  '0009_registration_marks': registrationMarks,
  '0010_bank_call_budgets': bankCallBudgets,
  '0011_bank_notices_and_reconciliation': bankNoticesAndReconciliation,
  '0012_registration_waits': registrationWaits,
  '0013_bank_notice_refunds': bankNoticeRefunds,
  '0014_pix_provider_accounts': pixProviderAccounts,
  '0015_state_history_by_month': stateHistoryByMonth,
  '0016_state_counts': stateCounts,
  '0017_autovacuum_per_table': autovacuumPerTable,
  // The search's payer name, tax id, our_number and amount filters (docs/api.md, "Search").
  '0018_search_filters': searchFilters,
  '0019_notice_queue_apart_from_log': noticeQueueApartFromLog,
};
