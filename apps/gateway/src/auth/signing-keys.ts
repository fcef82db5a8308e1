import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import type { GatewayDatabase } from '../db/schema';

export interface SigningKeys {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export class MissingSigningKeyError extends Error {
  override readonly name = 'MissingSigningKeyError';
}

/**
 * The Ed25519 key that signs access tokens. Production takes it from JWT_PRIVATE_KEY; development
 * generates one on first start and keeps it in Postgres, so restarts and several gateway instances
 * accept each other's tokens.
 */
export async function loadSigningKeys(
  db: Kysely<GatewayDatabase>,
  nodeEnv: RunMode,
  privateKey?: string,
): Promise<SigningKeys> {
  if (privateKey) return fromPrivatePem(privateKey);
  if (nodeEnv === 'production')
    throw new MissingSigningKeyError('JWT_PRIVATE_KEY (PKCS#8 PEM of an Ed25519 key) is required in production');
  // Several instances may start at once: the lock makes exactly one of them generate the key.
  const pem = await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('gateway.jwt_keys'))`.execute(trx);
    const stored = await trx
      .selectFrom('jwt_keys')
      .select('private_key_pem')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (stored) return stored.private_key_pem;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await trx
      .insertInto('jwt_keys')
      .values({
        kid: keyId(publicKey),
        private_key_pem: privatePem,
        public_key_pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      })
      .execute();
    return privatePem;
  });
  return fromPrivatePem(pem);
}

function fromPrivatePem(pem: string): SigningKeys {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new MissingSigningKeyError('the JWT private key must be an Ed25519 key');
  const publicKey = createPublicKey(privateKey);
  return { kid: keyId(publicKey), privateKey, publicKey };
}

function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url')
    .slice(0, 16);
}
