import { randomBytes } from 'node:crypto';
import { connect, nkeyAuthenticator, nkeys, type ConnectionOptions } from 'nats';
import type { NatsCredentials } from './auth';

/**
 * A login the server must refuse: the service's own user with a random password or, with a creds file
 * (an operator-mode server), a random nkey that no account signed. Undefined when there is nothing to
 * check: outside production (a developer's NATS takes any login, and that is fine there), or without
 * a login (production already refuses to start without one: libs/config's busCredentialChecks).
 */
export function wrongLogin(credentials: NatsCredentials = {}): WrongLogin | undefined {
  if (credentials.nodeEnv !== 'production') return undefined;
  if (credentials.natsCreds)
    return {
      who: 'an nkey that no account signed',
      options: { authenticator: nkeyAuthenticator(nkeys.createUser().getSeed()), user: undefined, pass: undefined },
    };
  if (credentials.natsUser)
    return {
      who: `user ${credentials.natsUser} with a wrong password`,
      options: { user: credentials.natsUser, pass: randomBytes(24).toString('hex'), authenticator: undefined },
    };
  return undefined;
}

export interface WrongLogin {
  /** Who tried, as the refusal to start says it. */
  who: string;
  /** The login options that replace the service's own. */
  options: Partial<ConnectionOptions>;
}

/**
 * Connects once with the wrong login over the same servers and TLS as the service's connection: true
 * when the server let it in (it checks no logins), false when it refused it as a server that checks
 * does. Any other failure (the server gone since the first connection) is thrown for the caller to
 * explain: a check that could not be made does not pass.
 */
export async function acceptsWrongLogin(options: ConnectionOptions, wrong: WrongLogin): Promise<boolean> {
  try {
    const probe = await connect({
      ...options,
      ...wrong.options,
      name: `${options.name ?? 'bus'} login check`,
      timeout: options.timeout ?? 5_000,
    });
    await probe.close().catch(() => undefined);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'AUTHORIZATION_VIOLATION') return false;
    throw err;
  }
}
