import { readFile } from 'node:fs/promises';
import { credsAuthenticator, type ConnectionOptions } from 'nats';

/**
 * A service's own login and TLS on an authenticated bus, named as the common config names them (so a
 * service passes its config as it is). Nothing set: no auth, no TLS (a development NATS).
 */
export interface NatsCredentials {
  /** NATS_USER / NATS_PASSWORD: the service's user in the server's config (deploy/nats). */
  natsUser?: string;
  natsPassword?: string;
  /** NATS_CREDS: a creds file (user JWT and nkey seed) for an operator-mode server; wins over user and password. */
  natsCreds?: string;
  /** NATS_TLS_CA_FILE: a CA to trust for the server's certificate. */
  natsTlsCaFile?: string;
  /** NATS_TLS_CERT_FILE / NATS_TLS_KEY_FILE: a client certificate, for a server that verifies clients. */
  natsTlsCertFile?: string;
  natsTlsKeyFile?: string;
  /**
   * NODE_ENV's run mode, as the common config names it: in production the service also makes sure the
   * server checks logins (it connects once with a wrong one, see login-check.ts) before it starts.
   */
  nodeEnv?: 'development' | 'production';
}

/** The NATS_CREDS file cannot be read: the login cannot even be tried. */
export class CredsFileError extends Error {
  override readonly name = 'CredsFileError';

  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`cannot read the NATS_CREDS file ${path} (${reason})`);
  }
}

/**
 * The login and TLS options of the credentials: a creds file (read here, so a missing file is named at
 * start), else user and password, else none; TLS when any TLS file is given.
 */
export async function authOptions(credentials: NatsCredentials = {}): Promise<Partial<ConnectionOptions>> {
  const options: Partial<ConnectionOptions> = {};
  if (credentials.natsCreds) {
    const path = credentials.natsCreds;
    const creds = await readFile(path).catch((err: NodeJS.ErrnoException) => {
      throw new CredsFileError(path, err.code ?? err.message);
    });
    options.authenticator = credsAuthenticator(new Uint8Array(creds));
  } else if (credentials.natsUser !== undefined) {
    options.user = credentials.natsUser;
    options.pass = credentials.natsPassword;
  }
  const { natsTlsCaFile: caFile, natsTlsCertFile: certFile, natsTlsKeyFile: keyFile } = credentials;
  if (caFile || certFile || keyFile) options.tls = { caFile, certFile, keyFile };
  return options;
}
