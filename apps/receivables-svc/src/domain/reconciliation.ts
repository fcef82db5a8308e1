import { sql, type Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import type { ProviderKind } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import { storeNotices } from '../db/notice-store';
import type { PaymentProviders, ProviderAccounts, SweepResult, SweepWindow } from './ports';

/**
 * Reconciliation: every PROVIDER_RECONCILE_INTERVAL_MS each bank account with open charges is
 * swept with the bank's own lists, by one instance at a time (a lease per bank account in Postgres),
 * and what the lists show is stored as notices, applied by the notice worker exactly as a notice
 * would be (once: event ids per charge and kind). A payment at the bank so reaches the ERP within two
 * intervals even when every notice was lost. A PIX charge's payment (its txid) is found in the bank's
 * received-PIX list, a boleto's in the boleto lists, each under its own charge id: once each.
 */

export interface ReconciliationDeps {
  db: Kysely<ReceivablesDatabase>;
  providers: PaymentProviders;
  accounts: ProviderAccounts;
  logger: Logger;
  /** PROVIDER_RECONCILE_INTERVAL_MS: how often each bank account is swept. */
  intervalMs: number;
  /** This instance, as lease holder. */
  holder: string;
  /** Wakes the notice worker after findings were stored. */
  onNotice?: () => void;
}

const DAY_MS = 86_400_000;
/** Payments are listed from the day before the last complete sweep: a payment posted late in a day is not missed. */
const PAID_OVERLAP_DAYS = 1;
/** Never further back than this (an account swept for the first time, or after a long outage). */
const MAX_LOOKBACK_DAYS = 60;
/** The callback history is read again from a little before where the last sweep ended. */
const CALLBACK_OVERLAP_MS = 10 * 60_000;
/** A first sweep reads the last day of callback history. */
const FIRST_CALLBACK_WINDOW_MS = DAY_MS;
/** After a failed sweep the account is tried again after this long at most (the lease is its delay). */
const FAILED_SWEEP_RETRY_MS = 30_000;

/** A bank account with open charges, as the sweep needs it. */
interface OpenAccount {
  tenant_id: string;
  account_key: string;
  /** Its newest version: the adapter calls with the bank account's newest credentials anyway. */
  account_id: string;
  due_from: string;
  due_to: string;
  oldest_open: Date;
}

/** Sweeps every bank account that is due and not held by another instance. Returns how many were swept. */
export async function reconcileDueAccounts(deps: ReconciliationDeps): Promise<number> {
  const kinds = (Object.keys(deps.providers) as ProviderKind[]).filter((k) => deps.providers[k].sweep !== undefined);
  if (kinds.length === 0) return 0;
  let swept = 0;
  for (const open of await accountsWithOpenCharges(deps.db, kinds)) {
    const lease = await takeLease(deps, open);
    if (!lease) continue;
    swept += 1;
    const startedAt = new Date();
    try {
      await sweepAccount(deps, open, lease, startedAt);
    } catch (err) {
      deps.logger.warn(
        { tenantId: open.tenant_id, accountKey: open.account_key, err },
        'reconciliation sweep failed; retried',
      );
      await release(deps.db, open, deps.holder, Math.min(deps.intervalMs, FAILED_SWEEP_RETRY_MS));
    }
  }
  return swept;
}

async function sweepAccount(deps: ReconciliationDeps, open: OpenAccount, lease: Lease, startedAt: Date): Promise<void> {
  const account = await deps.accounts.find(open.account_id);
  const sweep = account ? deps.providers[account.provider].sweep : undefined;
  if (!account || !sweep) return;
  const window = sweepWindow(open, lease, startedAt);
  const result: SweepResult = await sweep.call(deps.providers[account.provider], account, window);
  const fresh = await withoutSettled(deps.db, open, result.notices);
  let stored = 0;
  for (const source of ['history', 'list'] as const)
    stored += await storeNotices(
      deps.db,
      account,
      source,
      fresh.filter((n) => n.source === source),
    );
  if (stored > 0) deps.onNotice?.();
  await deps.db
    .updateTable('reconciliation_accounts')
    .set({ last_complete_at: startedAt, callbacks_until: window.callbacksTo, leased_until: new Date(), holder: null })
    .where('tenant_id', '=', open.tenant_id)
    .where('account_key', '=', open.account_key)
    .where('holder', '=', deps.holder)
    .execute();
  const summary = {
    tenantId: open.tenant_id,
    accountKey: open.account_key,
    calls: result.calls,
    found: result.notices.length,
    stored,
    ...(result.problems ? { problems: result.problems } : {}),
    window: {
      ...window,
      callbacksFrom: window.callbacksFrom.toISOString(),
      callbacksTo: window.callbacksTo.toISOString(),
    },
  };
  if (result.complete) deps.logger.debug(summary, 'reconciliation sweep done');
  // Lists cut short are read again next time (their windows overlap); said, since it means a busy account.
  else deps.logger.warn(summary, 'reconciliation sweep read the first pages only; the rest next time');
}

/** The windows of one sweep, in the bank's calendar (Brasília). */
export function sweepWindow(open: OpenAccount, lease: Lease, now: Date): SweepWindow {
  const earliest = now.getTime() - MAX_LOOKBACK_DAYS * DAY_MS;
  const paidSince = lease.lastCompleteAt
    ? lease.lastCompleteAt.getTime() - PAID_OVERLAP_DAYS * DAY_MS
    : open.oldest_open.getTime() - DAY_MS;
  const callbacksFrom = lease.callbacksUntil
    ? lease.callbacksUntil.getTime() - CALLBACK_OVERLAP_MS
    : now.getTime() - FIRST_CALLBACK_WINDOW_MS;
  return {
    paidFrom: brasiliaDate(new Date(Math.max(earliest, paidSince))),
    paidTo: brasiliaDate(now),
    dueFrom: open.due_from,
    dueTo: open.due_to,
    callbacksFrom: new Date(Math.max(earliest, callbacksFrom)),
    callbacksTo: now,
    // Every open charge was created at the bank after it was accepted here: lists by creation start there.
    createdFrom: open.oldest_open,
  };
}

/** The calendar day in Brasília (UTC-3 all year since 2019): the day banks in Brazil book a payment on. */
export function brasiliaDate(at: Date): string {
  return new Date(at.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);
}

/** Bank accounts (tenant and account key) of these provider kinds with open (pending) charges. */
async function accountsWithOpenCharges(db: Kysely<ReceivablesDatabase>, kinds: ProviderKind[]): Promise<OpenAccount[]> {
  const result = await sql<OpenAccount>`
    select pa.tenant_id, pa.account_key,
      (array_agg(pa.id order by pa.first_seen_at desc))[1] as account_id,
      min(r.due_date)::text as due_from, max(r.due_date)::text as due_to, min(r.created_at) as oldest_open
    from receivables r join provider_accounts pa on pa.id = r.provider_account_id
    where r.state = 'pending' and pa.provider in (${sql.join(kinds)})
    group by pa.tenant_id, pa.account_key`.execute(db);
  return result.rows;
}

/**
 * How long a sweep's lease lasts: two intervals, at least a minute. An instance that dies mid-sweep
 * keeps the account from the others that long.
 */
export function sweepLeaseMs(intervalMs: number): number {
  return Math.max(60_000, 2 * intervalMs);
}

interface Lease {
  lastCompleteAt: Date | null;
  callbacksUntil: Date | null;
}

/**
 * Takes the account's lease when it is due (its last complete sweep an interval ago or never) and no
 * other instance holds it, for sweepLeaseMs.
 */
async function takeLease(deps: ReconciliationDeps, open: OpenAccount): Promise<Lease | null> {
  const leaseMs = sweepLeaseMs(deps.intervalMs);
  const result = await sql<{ last_complete_at: Date | null; callbacks_until: Date | null }>`
    insert into reconciliation_accounts as ra (tenant_id, account_key, holder, leased_until)
    values (${open.tenant_id}, ${open.account_key}, ${deps.holder}, now() + ${`${leaseMs} milliseconds`}::interval)
    on conflict (tenant_id, account_key) do update
      set holder = excluded.holder, leased_until = excluded.leased_until
      where ra.leased_until < now()
        and (ra.last_complete_at is null or ra.last_complete_at <= now() - ${`${deps.intervalMs} milliseconds`}::interval)
    returning ra.last_complete_at, ra.callbacks_until`.execute(deps.db);
  const row = result.rows[0];
  return row ? { lastCompleteAt: row.last_complete_at, callbacksUntil: row.callbacks_until } : null;
}

/** Gives the lease back, to be taken again after `afterMs`. */
async function release(db: Kysely<ReceivablesDatabase>, open: OpenAccount, holder: string, afterMs: number) {
  await db
    .updateTable('reconciliation_accounts')
    .set({ leased_until: new Date(Date.now() + afterMs), holder: null })
    .where('tenant_id', '=', open.tenant_id)
    .where('account_key', '=', open.account_key)
    .where('holder', '=', holder)
    .execute();
}

/**
 * Findings about charges already as the finding says (paid ones paid, cancelled ones cancelled) need
 * nothing: left out, so sweeping a window again stores nothing. Charges not known here are kept: the
 * registration may not have kept the charge id yet.
 */
async function withoutSettled<N extends { chargeId: string; kind: string }>(
  db: Kysely<ReceivablesDatabase>,
  open: OpenAccount,
  notices: N[],
): Promise<N[]> {
  if (notices.length === 0) return [];
  const settled = new Set<string>();
  const ids = [...new Set(notices.map((n) => n.chargeId))];
  for (let i = 0; i < ids.length; i += 1_000) {
    const rows = await db
      .selectFrom('receivables')
      .innerJoin('provider_accounts', 'provider_accounts.id', 'receivables.provider_account_id')
      .select(['receivables.provider_charge_id', 'receivables.state'])
      .where('provider_accounts.tenant_id', '=', open.tenant_id)
      .where('provider_accounts.account_key', '=', open.account_key)
      .where('receivables.provider_charge_id', 'in', ids.slice(i, i + 1_000))
      .execute();
    for (const row of rows) {
      if (row.state === 'approved') settled.add(`${row.provider_charge_id}:paid`);
      if (row.state === 'cancelled' || row.state === 'rejected') settled.add(`${row.provider_charge_id}:cancelled`);
    }
  }
  return notices.filter((n) => !settled.has(`${n.chargeId}:${n.kind}`));
}

/**
 * Seconds since the last complete sweep of the bank account that has waited longest, among those with
 * open charges (one never swept counts from its oldest open charge). 0 when none has open charges.
 */
export async function reconciliationLagSeconds(
  db: Kysely<ReceivablesDatabase>,
  kinds: ProviderKind[],
): Promise<number> {
  if (kinds.length === 0) return 0;
  const result = await sql<{ lag: number | string | null }>`
    select extract(epoch from now() - min(coalesce(ra.last_complete_at, o.oldest_open))) as lag
    from (
      select pa.tenant_id, pa.account_key, min(r.created_at) as oldest_open
      from receivables r join provider_accounts pa on pa.id = r.provider_account_id
      where r.state = 'pending' and pa.provider in (${sql.join(kinds)})
      group by pa.tenant_id, pa.account_key
    ) o
    left join reconciliation_accounts ra on ra.tenant_id = o.tenant_id and ra.account_key = o.account_key`.execute(db);
  const lag = result.rows[0]?.lag;
  return lag === null || lag === undefined ? 0 : Math.max(0, Number(lag));
}
