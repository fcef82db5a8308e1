import { sql, type Kysely, type Migration } from 'kysely';
import type { Keyring } from '@payments/credential-seal';
import { sealSigningSecret } from '../../domain/tenancy/signing-secrets';

/** Made with the gateway's keyring, which sealing the signing secrets stored in clear needs (see gatewayMigrations). */
export function sealedSigningSecrets(keyring?: Keyring): Migration {
  return {
    // Tenants' signing secrets move from clear text to sealed values, and may have a previous one.
    async up(db: Kysely<unknown>) {
      await sql`alter table tenants
          add column sealed_signing_secret text,
          add column sealed_previous_signing_secret text,
          add column previous_valid_until timestamptz,
          add column signing_secret_rotated_at timestamptz`.execute(db);
      const clear = await sql<{ id: string; signing_secret: string }>`select id, signing_secret from tenants`.execute(
        db,
      );
      if (clear.rows.length > 0 && !keyring)
        throw new Error(
          `${clear.rows.length} tenant signing secrets are stored in clear and no CREDENTIALS_ENCRYPTION_KEY was given to seal them`,
        );
      for (const row of clear.rows)
        await sql`update tenants set sealed_signing_secret = ${sealSigningSecret(keyring!, row.id, row.signing_secret)}
            where id = ${row.id}`.execute(db);
      await sql`alter table tenants drop column signing_secret`.execute(db);
      await sql`alter table tenants alter column sealed_signing_secret set not null`.execute(db);
    },
  };
}
