import type { Kysely } from 'kysely';
import type { ConsoleRole } from '@payments/contracts';
import type { ConsoleUsersTable, GatewayDatabase } from '../schema';

/** Console users and invitations as stored. E-mails are compared lower-cased. */

export interface UserForSignIn {
  id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  tenant_id: string | null;
  tenant_name: string | null;
  tenant_status: 'active' | 'disabled' | null;
  password_hash: string;
  sealed_totp_secret: string;
}

export async function findActiveUserByEmail(
  db: Kysely<GatewayDatabase>,
  email: string,
): Promise<UserForSignIn | undefined> {
  return db
    .selectFrom('console_users as u')
    .leftJoin('tenants as t', 't.id', 'u.tenant_id')
    .select([
      'u.id',
      'u.email',
      'u.name',
      'u.role',
      'u.tenant_id',
      't.name as tenant_name',
      't.status as tenant_status',
      'u.password_hash',
      'u.sealed_totp_secret',
    ])
    .where((eb) => eb(eb.fn('lower', ['u.email']), '=', email.toLowerCase()))
    .where('u.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function activeEmailTaken(db: Kysely<GatewayDatabase>, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('console_users')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Takes a TOTP time step for the user: only a step after the last one taken, in one statement, so a
 * code is used once even by two sign-ins at the same moment.
 */
export async function claimTotpStep(db: Kysely<GatewayDatabase>, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('console_users')
    .set({ totp_last_step: String(step) })
    .where('id', '=', userId)
    .where('totp_last_step', '<', String(step))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markSignedIn(db: Kysely<GatewayDatabase>, userId: string, at: Date): Promise<void> {
  await db.updateTable('console_users').set({ last_sign_in_at: at }).where('id', '=', userId).execute();
}

export interface NewUserRow {
  id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  tenant_id: string | null;
  password_hash: string;
  sealed_totp_secret: string;
  totp_last_step: string;
}

export async function insertUser(db: Kysely<GatewayDatabase>, row: NewUserRow): Promise<void> {
  await db
    .insertInto('console_users')
    .values({ ...row, revoked_at: null, last_sign_in_at: null })
    .execute();
}

export type UserRow = Pick<
  ConsoleUsersTable,
  'id' | 'email' | 'name' | 'role' | 'tenant_id' | 'revoked_at' | 'last_sign_in_at'
> & { created_at: Date };

/** A tenant's users, or (tenantId null) the operators, oldest first. */
export async function listUserRows(db: Kysely<GatewayDatabase>, tenantId: string | null): Promise<UserRow[]> {
  let query = db
    .selectFrom('console_users')
    .select(['id', 'email', 'name', 'role', 'tenant_id', 'created_at', 'revoked_at', 'last_sign_in_at']);
  query = tenantId === null ? query.where('tenant_id', 'is', null) : query.where('tenant_id', '=', tenantId);
  return query.orderBy('created_at').orderBy('id').execute();
}

export async function findUser(db: Kysely<GatewayDatabase>, userId: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('console_users')
    .select(['id', 'email', 'name', 'role', 'tenant_id', 'created_at', 'revoked_at', 'last_sign_in_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
}

/** Revokes a user still active; false when it was not (unknown or already revoked). */
export async function revokeUserRow(db: Kysely<GatewayDatabase>, userId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('console_users')
    .set({ revoked_at: at })
    .where('id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/* Invitations ------------------------------------------------------------------------------------- */

export interface InvitationRecord {
  id: string;
  email: string;
  role: ConsoleRole;
  tenant_id: string | null;
  tenant_name: string | null;
  sealed_totp_secret: string | null;
  expires_at: Date;
}

export async function insertInvitation(
  db: Kysely<GatewayDatabase>,
  row: {
    id: string;
    token_hash: Buffer;
    email: string;
    role: ConsoleRole;
    tenant_id: string | null;
    invited_by: string;
    expires_at: Date;
  },
): Promise<void> {
  await db
    .insertInto('console_invitations')
    .values({ ...row, sealed_totp_secret: null, accepted_at: null, user_id: null })
    .execute();
}

/** An invitation not yet used nor expired, whose tenant (if any) is active; `lock` holds it to its transaction's end. */
export async function findOpenInvitation(
  db: Kysely<GatewayDatabase>,
  tokenHash: Buffer,
  now: Date,
  lock = false,
): Promise<InvitationRecord | undefined> {
  let query = db
    .selectFrom('console_invitations as i')
    .leftJoin('tenants as t', 't.id', 'i.tenant_id')
    .select([
      'i.id',
      'i.email',
      'i.role',
      'i.tenant_id',
      't.name as tenant_name',
      'i.sealed_totp_secret',
      'i.expires_at',
    ])
    .where('i.token_hash', '=', tokenHash)
    .where('i.accepted_at', 'is', null)
    .where('i.expires_at', '>', now)
    .where((eb) => eb.or([eb('i.tenant_id', 'is', null), eb('t.status', '=', 'active')]));
  if (lock) query = query.forUpdate('i');
  return query.executeTakeFirst();
}

/** Keeps the first TOTP secret given to an invitation; answers the one kept (a concurrent read may have won). */
export async function keepInvitationSecret(
  db: Kysely<GatewayDatabase>,
  invitationId: string,
  sealed: string,
): Promise<string> {
  await db
    .updateTable('console_invitations')
    .set({ sealed_totp_secret: sealed })
    .where('id', '=', invitationId)
    .where('sealed_totp_secret', 'is', null)
    .execute();
  const row = await db
    .selectFrom('console_invitations')
    .select('sealed_totp_secret')
    .where('id', '=', invitationId)
    .executeTakeFirstOrThrow();
  return row.sealed_totp_secret ?? sealed;
}

export async function markInvitationAccepted(
  db: Kysely<GatewayDatabase>,
  invitationId: string,
  userId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('console_invitations')
    .set({ accepted_at: at, user_id: userId, sealed_totp_secret: null })
    .where('id', '=', invitationId)
    .execute();
}

export async function findTenant(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
): Promise<{ id: string; name: string; status: 'active' | 'disabled' } | undefined> {
  return db.selectFrom('tenants').select(['id', 'name', 'status']).where('id', '=', tenantId).executeTakeFirst();
}
