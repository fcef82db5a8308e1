import { sql, type Kysely } from 'kysely';
import type { ConsoleRole } from '@payments/contracts';
import type { GatewayDatabase } from '../schema';

/** A session as stored, with what decides whether it still stands: its user, token, operator and tenant. */
export interface SessionRecord {
  role: ConsoleRole;
  tenant_id: string | null;
  tenant_name: string | null;
  tenant_status: 'active' | 'disabled' | null;
  user_id: string | null;
  user_email: string | null;
  user_name: string | null;
  user_revoked_at: Date | null;
  token_id: string | null;
  token_revoked_at: Date | null;
  operator_id: string | null;
  operator_name: string | null;
  operator_revoked_at: Date | null;
  started_at: Date;
  expires_at: Date;
  idle_expires_at: Date;
  ended_at: Date | null;
}

export interface NewSessionRow {
  idHash: Buffer;
  role: ConsoleRole;
  tenantId: string | null;
  userId: string | null;
  tokenId: string | null;
  operatorId: string | null;
  startedAt: Date;
  expiresAt: Date;
  idleExpiresAt: Date;
  address: string | null;
}

export async function insertSession(db: Kysely<GatewayDatabase>, row: NewSessionRow): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: row.idHash,
      role: row.role,
      tenant_id: row.tenantId,
      user_id: row.userId,
      token_id: row.tokenId,
      operator_id: row.operatorId,
      started_at: row.startedAt,
      expires_at: row.expiresAt,
      idle_expires_at: row.idleExpiresAt,
      ended_at: null,
      ended_reason: null,
      address: row.address,
    })
    .execute();
}

export async function findSession(db: Kysely<GatewayDatabase>, idHash: Buffer): Promise<SessionRecord | undefined> {
  return db
    .selectFrom('console_sessions as s')
    .leftJoin('tenants as t', 't.id', 's.tenant_id')
    .leftJoin('console_users as u', 'u.id', 's.user_id')
    .leftJoin('integration_tokens as it', 'it.id', 's.token_id')
    .leftJoin('operators as o', 'o.id', 's.operator_id')
    .select([
      's.role',
      's.tenant_id',
      't.name as tenant_name',
      't.status as tenant_status',
      's.user_id',
      'u.email as user_email',
      'u.name as user_name',
      'u.revoked_at as user_revoked_at',
      's.token_id',
      'it.revoked_at as token_revoked_at',
      's.operator_id',
      'o.name as operator_name',
      'o.revoked_at as operator_revoked_at',
      's.started_at',
      's.expires_at',
      's.idle_expires_at',
      's.ended_at',
    ])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
}

/** Moves the idle deadline of a session still open; false when it was ended meanwhile. */
export async function touchSession(db: Kysely<GatewayDatabase>, idHash: Buffer, idleExpiresAt: Date): Promise<boolean> {
  const result = await db
    .updateTable('console_sessions')
    .set({ idle_expires_at: idleExpiresAt })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Which open sessions to end: one, or every one of a user, an integration token, an operator or a tenant. */
export type SessionScope =
  { idHash: Buffer } | { userId: string } | { tokenId: string } | { operatorId: string } | { tenantId: string };

/** Ends open sessions at once; answers how many. */
export async function endSessions(
  db: Kysely<GatewayDatabase>,
  scope: SessionScope,
  reason: string,
  at: Date,
): Promise<number> {
  let query = db
    .updateTable('console_sessions')
    .set({ ended_at: at, ended_reason: reason })
    .where('ended_at', 'is', null);
  if ('idHash' in scope) query = query.where('id_hash', '=', scope.idHash);
  else if ('userId' in scope) query = query.where('user_id', '=', scope.userId);
  else if ('tokenId' in scope) query = query.where('token_id', '=', scope.tokenId);
  else if ('operatorId' in scope) query = query.where('operator_id', '=', scope.operatorId);
  else query = query.where('tenant_id', '=', scope.tenantId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The tenant's newest active integration token: the one a password user's tenant JWT descends from. */
export async function newestActiveTokenId(db: Kysely<GatewayDatabase>, tenantId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('integration_tokens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy(sql`id`)
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}
