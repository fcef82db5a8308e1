import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** Algorithm.Argon2id: the library declares its enum as an ambient const enum, which isolated modules cannot read. */
const ARGON2ID = 2 as Algorithm;

/**
 * Console passwords: argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: OWASP's first
 * choice), stored as the PHC string, which carries its own parameters and salt.
 */
export async function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

/** A hash of a random password, checked when the e-mail is unknown: a refusal takes the same time either way. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    decoy ??= hashPassword(`decoy ${Math.random()}`);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
