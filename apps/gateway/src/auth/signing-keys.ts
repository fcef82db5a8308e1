import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
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
export async function loadSigningKeys(db: Kysely<GatewayDatabase>, mode: RunMode, privateKeyPem?: string): Promise<SigningKeys> {
  if (privateKeyPem) return fromPrivatePem(privateKeyPem);
  if (mode === 'production') throw new MissingSigningKeyError('JWT_PRIVATE_KEY (PKCS#8 PEM of an Ed25519 key) is required in production');
  const stored = await db.selectFrom('jwt_keys').select('private_key_pem').orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  if (stored) return fromPrivatePem(stored.private_key_pem);
  const { privateKey } = generateKeyPairSync('ed25519');
  const generated = fromPrivatePem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  // Two instances may generate at once: the first insert wins and both use the stored key.
  await db
    .insertInto('jwt_keys')
    .values({ kid: generated.kid, private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), public_key_pem: generated.publicKey.export({ type: 'spki', format: 'pem' }).toString() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const winner = await db.selectFrom('jwt_keys').select('private_key_pem').orderBy('created_at', 'asc').limit(1).executeTakeFirstOrThrow();
  return fromPrivatePem(winner.private_key_pem);
}

function fromPrivatePem(pem: string): SigningKeys {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new MissingSigningKeyError('the JWT private key must be an Ed25519 key');
  const publicKey = createPublicKey(privateKey);
  const kid = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url').slice(0, 16);
  return { kid, privateKey, publicKey };
}
