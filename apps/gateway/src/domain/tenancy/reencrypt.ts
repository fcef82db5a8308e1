import type { Kysely } from 'kysely';
import { needsResealing, open, seal, type Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import { recordAdminAction, type AuditedBy } from './admin-audit';
import { openSigningSecret, sealSigningSecret } from './signing-secrets';

/** What `secrets reencrypt` did: how many sealed values it sealed again, and how many already had the current key. */
export interface ReencryptResult {
  key_id: string;
  signing_secrets: number;
  provider_credentials: number;
  already_current: number;
}

/**
 * After a CREDENTIALS_ENCRYPTION_KEY rotation: every sealed value (tenants' signing secrets, current
 * and previous, and provider account credentials) not sealed with the current key is opened with the
 * keyring and sealed with the current key. Row by row, each in its own short transaction, so a
 * running gateway is never blocked for long; running it again finds nothing left to do.
 */
export async function reencryptSecrets(
  db: Kysely<GatewayDatabase>,
  keyring: Keyring,
  by: AuditedBy,
): Promise<ReencryptResult> {
  const result: ReencryptResult = {
    key_id: keyring.current.kid,
    signing_secrets: 0,
    provider_credentials: 0,
    already_current: 0,
  };
  const tenants = await db.selectFrom('tenants').select('id').orderBy('id').execute();
  for (const { id } of tenants) {
    await db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('tenants')
        .select(['sealed_signing_secret', 'sealed_previous_signing_secret'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const reseal = (sealed: string | null): string | null => {
        if (sealed === null) return null;
        if (!needsResealing(keyring, sealed)) {
          result.already_current++;
          return sealed;
        }
        result.signing_secrets++;
        return sealSigningSecret(keyring, id, openSigningSecret(keyring, id, sealed));
      };
      const current = reseal(row.sealed_signing_secret)!;
      const previous = reseal(row.sealed_previous_signing_secret);
      if (current !== row.sealed_signing_secret || previous !== row.sealed_previous_signing_secret)
        await trx
          .updateTable('tenants')
          .set({ sealed_signing_secret: current, sealed_previous_signing_secret: previous })
          .where('id', '=', id)
          .execute();
    });
  }
  // Account versions are immutable but for their sealing: the credentials stay bound to the version id.
  const accounts = await db
    .selectFrom('provider_accounts')
    .select(['id', 'sealed_credentials'])
    .where('sealed_credentials', 'is not', null)
    .execute();
  for (const { id, sealed_credentials: sealed } of accounts) {
    if (!needsResealing(keyring, sealed!)) {
      result.already_current++;
      continue;
    }
    const resealed = seal(keyring, open(keyring, sealed!, id), id);
    // Only if no one changed it meanwhile (a concurrent reencrypt).
    const updated = await db
      .updateTable('provider_accounts')
      .set({ sealed_credentials: resealed })
      .where('id', '=', id)
      .where('sealed_credentials', '=', sealed)
      .executeTakeFirst();
    if (updated.numUpdatedRows > 0n) result.provider_credentials++;
  }
  await recordAdminAction(db, by, 'secrets.reencrypt', null, { ...result });
  return result;
}
