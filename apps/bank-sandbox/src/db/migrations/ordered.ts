import type { Migration } from 'kysely';
import { chargesAndNotifications } from './0001_charges_and_notifications';
import { notificationTraceContext } from './0002_notification_trace_context';
import { chargeBeneficiary } from './0003_charge_beneficiary';
import { interDialectMigration } from './0100_inter_dialect';
import { interFaithfulMigration } from './0101_inter_faithful';
import { pixDialectMigration } from './0102_pix_dialect';

/** The schema's migrations in the order they run, one file each, named after its key. */
export const migrations: Record<string, Migration> = {
  '0001_charges_and_notifications': chargesAndNotifications,
  '0002_notification_trace_context': notificationTraceContext,
  '0003_charge_beneficiary': chargeBeneficiary,
  // The Inter dialect's tables; numbered apart so other migrations sort before it.
  '0100_inter_dialect': interDialectMigration,
  // Integrations, the duplicate window and the callback history ("The sandbox behaves like the bank").
  '0101_inter_faithful': interFaithfulMigration,
  // The PIX API (cobv, PIX received, devoluções, webhooks per key) of both dialects.
  '0102_pix_dialect': pixDialectMigration,
};
