import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUuid, OPERATOR_CREDENTIAL_PREFIX } from '@payments/contracts';
import type { GatewayDatabase } from '../../db/schema';
import { recordAdminAction, type AuditedBy } from './admin-audit';
import { AdminError, AdminNotFoundError } from './admin-error';

/**
 * Operators of the admin API: a name and a credential, shown once and stored as SHA-256,
 * like integration tokens but in a table of their own with a prefix of their own, so that neither
 * kind of credential is ever taken where the other belongs.
 */

export interface NewOperator {
  operator_id: string;
  name: string;
  /** Shown once: never stored. */
  credential: string;
}

export interface OperatorView {
  operator_id: string;
  name: string;
  credential_hint: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

const MAX_NAME = 100;

export function hashOperatorCredential(credential: string): Buffer {
  return createHash('sha256').update(credential, 'utf8').digest();
}

/** The operator's name, as the audit records it: 1 to 100 printable characters. */
function operatorName(name: string): string {
  const trimmed = name.trim();
  // eslint-disable-next-line no-control-regex
  if (trimmed === '' || trimmed.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(trimmed))
    throw new AdminError(`an operator name is 1 to ${MAX_NAME} printable characters`);
  return trimmed;
}

export async function createOperator(db: Kysely<GatewayDatabase>, name: string, by: AuditedBy): Promise<NewOperator> {
  const checked = operatorName(name);
  const credential = OPERATOR_CREDENTIAL_PREFIX + randomBytes(32).toString('base64url');
  const id = randomUUID();
  return db.transaction().execute(async (trx) => {
    const taken = await trx
      .selectFrom('operators')
      .select('id')
      .where('name', '=', checked)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (taken)
      throw new AdminError(`an active operator is already named ${checked}: revoke it first, or pick another name`);
    await trx
      .insertInto('operators')
      .values({
        id,
        name: checked,
        credential_hash: hashOperatorCredential(credential),
        credential_hint: credential.slice(0, OPERATOR_CREDENTIAL_PREFIX.length + 6),
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
    await recordAdminAction(trx, by, 'operator.create', null, { operator_id: id, name: checked });
    return { operator_id: id, name: checked, credential };
  });
}

export async function listOperators(db: Kysely<GatewayDatabase>): Promise<OperatorView[]> {
  const rows = await db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({
    operator_id: r.id,
    name: r.name,
    credential_hint: r.credential_hint,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    last_used_at: r.last_used_at?.toISOString() ?? null,
  }));
}

/** Revokes an operator: its credential is refused from the next request on. */
export async function revokeOperator(
  db: Kysely<GatewayDatabase>,
  operatorId: string,
  by: AuditedBy,
): Promise<{ operator_id: string; name: string }> {
  if (!isUuid(operatorId))
    throw new AdminError('operator revoke needs an operator id (a UUID, as operator list shows)');
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('operators')
      .set({ revoked_at: new Date() })
      .where('id', '=', operatorId)
      .where('revoked_at', 'is', null)
      .returning(['id', 'name'])
      .executeTakeFirst();
    if (!row) throw new AdminNotFoundError(`no active operator ${operatorId}`);
    await recordAdminAction(trx, by, 'operator.revoke', null, { operator_id: row.id, name: row.name });
    return { operator_id: row.id, name: row.name };
  });
}

/** The active operator holding this credential, or undefined. */
export async function findActiveOperator(
  db: Kysely<GatewayDatabase>,
  credential: string,
): Promise<{ operator_id: string; name: string } | undefined> {
  if (!credential.startsWith(OPERATOR_CREDENTIAL_PREFIX)) return undefined;
  const row = await db
    .updateTable('operators')
    .set({ last_used_at: new Date() })
    .where('credential_hash', '=', hashOperatorCredential(credential))
    .where('revoked_at', 'is', null)
    .returning(['id', 'name'])
    .executeTakeFirst();
  return row && { operator_id: row.id, name: row.name };
}
