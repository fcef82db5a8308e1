import { AsyncLocalStorage } from 'node:async_hooks';
import { userInfo } from 'node:os';
import type { Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import type { GatewayDatabase } from '../../db/schema';
import { AdminError } from './admin-error';
import { isUuid, type AuditSource } from '@payments/contracts';

/**
 * The audit of operator actions: who, when and what, one row per change, written in the
 * change's own transaction so neither exists without the other. Rows name ids and settings, never a
 * secret or a token.
 */

/**
 * Who acts: the operator the admin CLI names (--operator or ADMIN_OPERATOR), the admin API's
 * credential's name, or the console user's e-mail; and where from.
 */
export interface AuditedBy extends AuditOrigin {
  operator: string;
}

/** Where an action came from: the channel, the client address and request id, the console user. */
export interface AuditOrigin {
  source?: AuditSource;
  address?: string;
  requestId?: string;
  userId?: string;
  userEmail?: string;
}

/** The operator recorded when code (a test, a bench) calls an action directly instead of the CLI. */
export const CALLED_FROM_CODE: AuditedBy = { operator: '(code)', source: 'code' };

/**
 * The origin of the request being served, set by the admin API's operator check for the rest of the
 * request: the admin routes name only the operator, and every action they audit gets the channel,
 * address, request id and console user from here (explicit fields of an AuditedBy win).
 */
const requestOrigin = new AsyncLocalStorage<AuditOrigin>();

export function withAuditOrigin<T>(origin: AuditOrigin, run: () => Promise<T>): Promise<T> {
  return requestOrigin.run(origin, run);
}

export const AdminActions = [
  'tenant.create',
  'tenant.disable',
  'tenant.account',
  'tenant.rotate-secret',
  'token.create',
  'token.revoke',
  'secrets.reencrypt',
  'jobs.redrive',
  // A dead letter naming a stream or subject outside the bus registry: nothing published.
  'jobs.redrive-refused',
  // A dead letter removed without being published again.
  'jobs.discard',
  'operator.create',
  'operator.revoke',
  'session.sign-in',
  // Refused sign-ins: wrong credentials, over a limit, or a development method in production.
  'session.sign-in-refused',
  'session.sign-out',
  'user.invite',
  'user.accept',
  'user.revoke',
] as const;
export type AdminAction = (typeof AdminActions)[number];

/** What an action changed: ids, names and settings only. */
export type AuditDetails = Record<string, string | number | boolean | null>;

export async function recordAdminAction(
  db: Kysely<GatewayDatabase>,
  by: AuditedBy,
  action: AdminAction,
  tenantId: string | null,
  details: AuditDetails = {},
): Promise<void> {
  const origin = { ...requestOrigin.getStore(), ...definedOnly(by) };
  await db
    .insertInto('admin_audit')
    .values({
      operator: by.operator,
      action,
      tenant_id: tenantId,
      details: JSON.stringify(details),
      source: origin.source ?? null,
      address: origin.address ?? null,
      request_id: origin.requestId ?? null,
      user_id: origin.userId ?? null,
      user_email: origin.userEmail ?? null,
    })
    .execute();
}

function definedOnly(by: AuditedBy): AuditedBy {
  return Object.fromEntries(Object.entries(by).filter(([, value]) => value !== undefined)) as AuditedBy;
}

export interface AuditEntry {
  id: number;
  /** ISO 8601. */
  at: string;
  operator: string;
  action: AdminAction;
  tenant_id: string | null;
  details: AuditDetails;
  /** Null on rows written before migration 0014. */
  source: AuditSource | null;
  address: string | null;
  request_id: string | null;
  user_id: string | null;
  user_email: string | null;
}

type AuditRow = {
  id: string;
  at: Date;
  operator: string;
  action: AdminAction;
  tenant_id: string | null;
  details: AuditDetails;
  source: AuditSource | null;
  address: string | null;
  request_id: string | null;
  user_id: string | null;
  user_email: string | null;
};

function auditEntry(r: AuditRow): AuditEntry {
  return {
    id: Number(r.id),
    at: r.at.toISOString(),
    operator: r.operator,
    action: r.action,
    tenant_id: r.tenant_id,
    details: r.details,
    source: r.source,
    address: r.address,
    request_id: r.request_id,
    user_id: r.user_id,
    user_email: r.user_email,
  };
}

/** The audit, oldest first, of one tenant or of all; at most `limit` rows, the newest ones. */
export async function listAdminAudit(
  db: Kysely<GatewayDatabase>,
  filter: { tenantId?: string; limit?: number } = {},
): Promise<AuditEntry[]> {
  let query = db.selectFrom('admin_audit').selectAll();
  if (filter.tenantId !== undefined) {
    if (!isUuid(filter.tenantId)) throw new AdminError('--tenant must be a tenant id (a UUID)');
    query = query.where('tenant_id', '=', filter.tenantId);
  }
  const rows = await query
    .orderBy('id', 'desc')
    .limit(filter.limit ?? 1_000)
    .execute();
  return rows.reverse().map(auditEntry);
}

const MAX_OPERATOR = 100;

/**
 * The operator of a CLI command: --operator, else ADMIN_OPERATOR; production requires one, development
 * falls back to the OS user (or `development`).
 */
export function resolveOperator(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  mode: RunMode,
  osUser: () => string = () => userInfo().username,
): AuditedBy {
  const given = flag ?? env.ADMIN_OPERATOR;
  if (given === undefined || given.trim() === '') {
    if (mode === 'production')
      throw new AdminError(
        'who runs this is recorded in the audit: set ADMIN_OPERATOR=<your name> or pass --operator <your name> (required in production)',
      );
    let user: string;
    try {
      user = osUser();
    } catch {
      user = '';
    }
    return { operator: user.trim() || 'development' };
  }
  const operator = given.trim();
  // eslint-disable-next-line no-control-regex
  if (operator.length > MAX_OPERATOR || /[\u0000-\u001f\u007f]/.test(operator))
    throw new AdminError(`the operator name must be at most ${MAX_OPERATOR} printable characters`);
  return { operator };
}

/** What a page of the audit is narrowed to; every filter given must hold. */
export interface AuditFilter {
  tenantId?: string;
  /** One action, or a group of them when it ends in a dot (`jobs.`). */
  action?: string;
  /** The operator's recorded name or a console user's e-mail, in any case. */
  operator?: string;
  /** Rows at or after. */
  since?: Date;
  /** Rows before. */
  until?: Date;
}

/**
 * A page of the audit, newest first: the rows before `before` (an id, the previous page's cursor)
 * that match `filter`. `next` is the cursor of the following (older) page, undefined on the last one.
 * Ids grow with time, so the id alone orders and pages the rows.
 */
export async function pageAdminAudit(
  db: Kysely<GatewayDatabase>,
  page: AuditFilter & { before?: number; limit: number },
): Promise<{ items: AuditEntry[]; next?: number }> {
  let query = db.selectFrom('admin_audit').selectAll();
  if (page.tenantId !== undefined) query = query.where('tenant_id', '=', page.tenantId);
  if (page.action !== undefined)
    query = page.action.endsWith('.')
      ? query.where((eb) => eb(eb.cast<string>('action', 'text'), 'like', `${page.action}%`))
      : query.where('action', '=', page.action as AdminAction);
  if (page.operator !== undefined) {
    const who = page.operator.toLowerCase();
    query = query.where((eb) =>
      eb.or([eb(eb.fn('lower', ['operator']), '=', who), eb(eb.fn('lower', ['user_email']), '=', who)]),
    );
  }
  if (page.since !== undefined) query = query.where('at', '>=', page.since);
  if (page.until !== undefined) query = query.where('at', '<', page.until);
  if (page.before !== undefined) query = query.where('id', '<', String(page.before));
  // One row more than asked tells whether another page follows.
  const rows = await query
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const items = rows.slice(0, page.limit).map(auditEntry);
  const last = items[items.length - 1];
  return { items, next: rows.length > page.limit && last ? last.id : undefined };
}
