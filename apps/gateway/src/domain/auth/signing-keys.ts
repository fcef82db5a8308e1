import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import type { GatewayDatabase } from '../../db/schema';

export interface SigningKeys {
  /** The `kid` header of the tokens it signs: a hash of its public key. */
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Every key a token may be signed with, by kid: the current one and the previous ones of a rotation. */
  verificationKeys: ReadonlyMap<string, KeyObject>;
}

export class MissingSigningKeyError extends Error {
  override readonly name = 'MissingSigningKeyError';
}

/**
 * The Ed25519 key that signs access tokens, and the public keys that still verify them. Production
 * takes the private key from JWT_PRIVATE_KEY and never writes it to the database; development
 * generates one on first start and keeps it in Postgres, so restarts and several gateway instances
 * accept each other's tokens. During a key rotation the previous keys' public halves
 * (JWT_PREVIOUS_PUBLIC_KEYS) keep verifying the tokens they signed until those expire.
 */
export async function loadSigningKeys(
  db: Kysely<GatewayDatabase>,
  nodeEnv: RunMode,
  privateKey?: string,
  previousPublicKeys: readonly string[] = [],
): Promise<SigningKeys> {
  const current = privateKey ? fromPrivatePem(privateKey) : await developmentKey(db, nodeEnv);
  const verificationKeys = new Map<string, KeyObject>();
  for (const pem of previousPublicKeys) {
    const publicKey = createPublicKey(pem);
    if (publicKey.asymmetricKeyType !== 'ed25519')
      throw new MissingSigningKeyError('a previous JWT public key must be an Ed25519 key');
    verificationKeys.set(keyId(publicKey), publicKey);
  }
  verificationKeys.set(current.kid, current.publicKey);
  return { ...current, verificationKeys };
}

/** The key a token names in its `kid` header, if it is one of ours. */
export function verificationKey(keys: SigningKeys, kid: string | undefined): KeyObject | undefined {
  return kid === undefined ? undefined : keys.verificationKeys.get(kid);
}

/** The development key, kept in Postgres; production has none. */
async function developmentKey(db: Kysely<GatewayDatabase>, nodeEnv: RunMode): Promise<CurrentKey> {
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

type CurrentKey = Omit<SigningKeys, 'verificationKeys'>;

function fromPrivatePem(pem: string): CurrentKey {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new MissingSigningKeyError('the JWT private key must be an Ed25519 key');
  const publicKey = createPublicKey(privateKey);
  return { kid: keyId(publicKey), privateKey, publicKey };
}

/** The kid of a public key: the first 16 characters of the base64url SHA-256 of its SPKI DER. */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url')
    .slice(0, 16);
}
