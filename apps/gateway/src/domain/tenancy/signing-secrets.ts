import { sql, type Kysely } from 'kysely';
import { SIGNING_SECRET_MAX_AGE_MS, type SigningSecretReply } from '@payments/contracts';
import { open, seal, type Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import { AdminError, AdminNotFoundError } from './admin-error';
import { recordAdminAction, type AuditedBy } from './admin-audit';
import { generateSigningSecret } from './credentials';

/**
 * Tenants' webhook signing secrets: sealed at rest with CREDENTIALS_ENCRYPTION_KEY, bound to
 * the tenant. A rotation keeps the previous secret for an overlap, during which every callback carries
 * both signatures; callback-svc asks for them at signing time and may reuse a reply for at most
 * max_age_ms, so a rotation reaches every instance within SIGNING_SECRET_MAX_AGE_MS.
 */

/** What a signing secret is sealed for: the tenant (a sealed secret copied onto another tenant does not open). */
export function signingSecretBinding(tenantId: string): string {
  return `tenant-signing-secret:${tenantId}`;
}

export function sealSigningSecret(keyring: Keyring, tenantId: string, secret: string): string {
  return seal(keyring, secret, signingSecretBinding(tenantId));
}

export function openSigningSecret(keyring: Keyring, tenantId: string, sealed: string): string {
  return open(keyring, sealed, signingSecretBinding(tenantId));
}

/** The longest overlap a rotation may ask for: 30 days. */
export const MAX_OVERLAP_HOURS = 720;

export interface RotatedSecret {
  tenant_id: string;
  signing_secret: string;
  /** ISO 8601: until then callbacks carry the old signature too; the rotation's own time for an overlap of 0. */
  previous_valid_until: string;
}

/**
 * When the running overlap ends: previous_valid_until while a previous secret is kept and that time is
 * still ahead by Postgres's clock, else null.
 */
const overlapEnd = sql<Date | null>`case when sealed_previous_signing_secret is not null
  and previous_valid_until > now() then previous_valid_until end`;

/** The end (ISO 8601) of each running overlap, by tenant id: a tenant without one is absent. For listings. */
export async function overlapEndsOf(db: Kysely<GatewayDatabase>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('tenants')
    .select(['id', 'previous_valid_until'])
    .where('sealed_previous_signing_secret', 'is not', null)
    .where('previous_valid_until', '>', sql<Date>`now()`)
    .execute();
  const ends = new Map<string, string>();
  for (const r of rows) if (r.previous_valid_until) ends.set(r.id, r.previous_valid_until.toISOString());
  return ends;
}

/**
 * A rotation refused because the previous one's overlap still runs: rotating now would drop the
 * secret before it at once, which an ERP that has not switched yet still checks callbacks with.
 */
export class RotationOverlapRunningError extends AdminError {
  constructor(
    readonly tenantId: string,
    /** ISO 8601: when the previous secret stops being accepted anyway. */
    readonly overlapEndsAt: string,
  ) {
    super(
      `the previous signing secret of tenant ${tenantId} is still accepted until ${overlapEndsAt}; rotating now stops it at once: confirm to rotate anyway`,
    );
  }
}

export interface RotateOptions {
  /**
   * refuse: a rotation during a running overlap is a RotationOverlapRunningError (the admin API, unless
   * the operator confirmed); replace (default, the CLI's): the secret still in its overlap is dropped.
   */
  duringOverlap?: 'refuse' | 'replace';
}

/**
 * Replaces the tenant's signing secret. The current one stays valid for `overlapHours` (fractional;
 * 0 ends it at once); a previous secret still in its overlap is dropped (or, with duringOverlap
 * 'refuse', the rotation refused), so at most two sign. Times are Postgres's clock, the one the
 * gateway compares them with when callback-svc asks.
 */
export async function rotateSigningSecret(
  db: Kysely<GatewayDatabase>,
  keyring: Keyring,
  tenantId: string,
  overlapHours: number,
  audit: AuditedBy,
  options: RotateOptions = {},
): Promise<RotatedSecret> {
  if (!Number.isFinite(overlapHours) || overlapHours < 0 || overlapHours > MAX_OVERLAP_HOURS)
    throw new AdminError(`--overlap-hours must be a number of hours from 0 to ${MAX_OVERLAP_HOURS}`);
  const secret = generateSigningSecret();
  const sealed = sealSigningSecret(keyring, tenantId, secret);
  const overlapMs = Math.round(overlapHours * 3_600_000);
  return db.transaction().execute(async (trx) => {
    const tenant = await trx
      .selectFrom('tenants')
      .select(['sealed_signing_secret', overlapEnd.as('overlap_ends_at')])
      .where('id', '=', tenantId)
      .forUpdate()
      .executeTakeFirst();
    if (!tenant) throw new AdminNotFoundError(`no tenant ${tenantId}`);
    if (tenant.overlap_ends_at !== null && options.duringOverlap === 'refuse')
      throw new RotationOverlapRunningError(tenantId, tenant.overlap_ends_at.toISOString());
    // Opening it proves the keyring can: a rotation must not keep a previous secret no gateway can read.
    openSigningSecret(keyring, tenantId, tenant.sealed_signing_secret);
    const row = await trx
      .updateTable('tenants')
      .set({
        sealed_signing_secret: sealed,
        // An overlap of 0 keeps nothing of the old secret.
        sealed_previous_signing_secret: overlapMs > 0 ? tenant.sealed_signing_secret : null,
        previous_valid_until: sql<Date>`now() + ${overlapMs} * interval '1 millisecond'`,
        signing_secret_rotated_at: sql<Date>`now()`,
      })
      .where('id', '=', tenantId)
      .returning('previous_valid_until')
      .executeTakeFirstOrThrow();
    const validUntil = row.previous_valid_until!.toISOString();
    await recordAdminAction(trx, audit, 'tenant.rotate-secret', tenantId, {
      overlap_hours: overlapHours,
      previous_valid_until: validUntil,
    });
    return { tenant_id: tenantId, signing_secret: secret, previous_valid_until: validUntil };
  });
}

/**
 * The secrets that sign the tenant's callbacks now (tenants.signing-secret), or undefined for an
 * unknown tenant. The previous secret is included only while its overlap lasts, and the reply may be
 * reused no longer than that overlap has left.
 */
export async function signingSecretsOf(
  db: Kysely<GatewayDatabase>,
  keyring: Keyring,
  tenantId: string,
): Promise<SigningSecretReply | undefined> {
  const row = await db
    .selectFrom('tenants')
    .select([
      'sealed_signing_secret',
      'sealed_previous_signing_secret',
      'previous_valid_until',
      // Milliseconds the overlap has left by Postgres's clock (negative when over).
      sql<string | null>`extract(epoch from (previous_valid_until - now())) * 1000`.as('overlap_left_ms'),
    ])
    .where('id', '=', tenantId)
    .executeTakeFirst();
  if (!row) return undefined;
  const leftMs = row.overlap_left_ms === null ? 0 : Math.floor(Number(row.overlap_left_ms));
  const previous =
    row.sealed_previous_signing_secret !== null && leftMs > 0
      ? openSigningSecret(keyring, tenantId, row.sealed_previous_signing_secret)
      : null;
  return {
    signing_secret: openSigningSecret(keyring, tenantId, row.sealed_signing_secret),
    previous_signing_secret: previous,
    previous_valid_until: previous === null ? null : row.previous_valid_until!.toISOString(),
    max_age_ms: previous === null ? SIGNING_SECRET_MAX_AGE_MS : Math.min(SIGNING_SECRET_MAX_AGE_MS, leftMs),
  };
}
