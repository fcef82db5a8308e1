import { ConfigError } from './env';
import type { RunMode } from './run-mode';

/**
 * The one rule for secrets in production: each app lists its secrets, and a missing one or one still
 * equal to a public development default stops the start. Every offending variable is named in one
 * message, so an operator fixes them all in one go rather than one restart at a time.
 */
export interface SecretCheck {
  /** The variable the operator sets (or the variables, when any of them will do: `A or B`). */
  variable: string;
  /** Its value; undefined, empty or only white space when unset. */
  value: string | undefined;
  /** Public values (the development defaults) it must not keep, compared as sameSecret does. */
  developmentDefaults?: readonly string[];
  /** What to set, shown when it is missing, e.g. `openssl rand -base64 32`. */
  hint?: string;
  /** It may be unset (e.g. a password Postgres does not need); set, it still may not be a default. */
  optional?: boolean;
}

/**
 * What every development default of the repo starts with (`development-download-link-secret`, the
 * bytes of the development CREDENTIALS_ENCRYPTION_KEY, `development-nats-<user>`): a secret that
 * starts so is refused even if no list names it, so a default added later is refused from its
 * first day.
 */
export const DEVELOPMENT_VALUE_PREFIX = 'development-';

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
/** Standard Webhooks secrets (`whsec_<base64>`): the apps sign with the bytes after the prefix. */
const KEY_PREFIX = 'whsec_';

/**
 * The bytes a secret may stand for, as an app reads it: its text without the white space around it
 * (a value pasted with a newline is the same secret), and, when that text is also an encoding of a
 * key, the bytes it decodes to: base64 with or without its `=` padding, base64url, hex, and the
 * same after a `whsec_` prefix. Each form is given in hex, ready to compare.
 */
export function secretForms(value: string): Set<string> {
  const text = value.trim();
  const forms = new Set([Buffer.from(text, 'utf8').toString('hex')]);
  const encoded = text.startsWith(KEY_PREFIX) ? text.slice(KEY_PREFIX.length) : text;
  const unpadded = encoded.replace(/=+$/, '');
  // A length of 4n+1 characters is no base64; Node would decode it anyway, dropping the last one.
  if (BASE64.test(encoded) && unpadded.length % 4 !== 1)
    forms.add(Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex'));
  if (HEX.test(encoded)) forms.add(encoded.toLowerCase());
  forms.delete('');
  return forms;
}

/**
 * Whether two values are the same secret: one of the forms of one (secretForms) is one of the
 * other's. So the development key without its padding, in base64url, in hex, or with a trailing
 * newline is still the development key.
 */
export function sameSecret(a: string, b: string): boolean {
  const formsOfB = secretForms(b);
  return [...secretForms(a)].some((form) => formsOfB.has(form));
}

const DEVELOPMENT_PREFIX_HEX = Buffer.from(DEVELOPMENT_VALUE_PREFIX, 'utf8').toString('hex');

/** Whether a value is one of the given public defaults, or any value starting with `development-`. */
export function isDevelopmentDefault(value: string, developmentDefaults: readonly string[] = []): boolean {
  if ([...secretForms(value)].some((form) => form.startsWith(DEVELOPMENT_PREFIX_HEX))) return true;
  return developmentDefaults.some((known) => sameSecret(value, known));
}

/** One line per offending variable (empty when production may start). */
export function productionSecretProblems(checks: readonly SecretCheck[]): string[] {
  return checks.flatMap(({ variable, value, developmentDefaults = [], hint, optional }) => {
    if (value === undefined || value.trim() === '')
      return optional ? [] : [`${variable} is missing${hint ? ` (${hint})` : ''}`];
    if (isDevelopmentDefault(value, developmentDefaults)) return [`${variable} is the public development default`];
    return [];
  });
}

/** Throws one ConfigError naming every offending variable, in production; development passes. */
export function requireProductionSecrets(mode: RunMode, checks: readonly SecretCheck[]): void {
  if (mode !== 'production') return;
  const problems = productionSecretProblems(checks);
  if (problems.length > 0)
    throw new ConfigError(
      `production refuses to start with missing or development secrets: ${problems.join('; ')}. Set them, or NODE_ENV=development on a developer machine`,
    );
}

/**
 * Every user of the bus (deploy/nats): the services, the admin CLI's `admin-cli` and the
 * provisioning `admin`. docker-compose falls back to `development-nats-<user>` for each, public since
 * it is in the repo; a test holds this list to deploy/nats and docker-compose.yml.
 */
export const DEVELOPMENT_NATS_USERS = [
  'gateway',
  'clients-svc',
  'receivables-svc',
  'booklet-svc',
  'callback-svc',
  'admin-cli',
  'admin',
] as const;

/** The passwords docker-compose falls back to for each NATS user (public: in the repo). */
export const DEVELOPMENT_NATS_PASSWORDS: readonly string[] = DEVELOPMENT_NATS_USERS.map(
  (user) => `${DEVELOPMENT_VALUE_PREFIX}nats-${user}`,
);

/**
 * The bus credentials of a service that connects to NATS: NATS_USER with NATS_PASSWORD, or NATS_CREDS
 * (deploy/nats gives each service its own user).
 */
export function busCredentialChecks(config: {
  natsUser?: string;
  natsPassword?: string;
  natsCreds?: string;
}): SecretCheck[] {
  if (config.natsCreds) return [];
  if (config.natsUser || config.natsPassword)
    return [
      { variable: 'NATS_USER', value: config.natsUser, hint: "this service's own NATS user, see deploy/nats" },
      {
        variable: 'NATS_PASSWORD',
        value: config.natsPassword,
        developmentDefaults: DEVELOPMENT_NATS_PASSWORDS,
        hint: 'the password of NATS_USER',
      },
    ];
  return [
    {
      variable: 'NATS_USER/NATS_PASSWORD or NATS_CREDS',
      value: undefined,
      hint: "this service's own NATS user, see deploy/nats",
    },
  ];
}

/** docker-compose's Postgres password (POSTGRES_PASSWORD, and in its apps' DATABASE_URL): public. */
export const DEVELOPMENT_DATABASE_PASSWORDS: readonly string[] = ['postgres'];

/**
 * The Postgres password in DATABASE_URL, when it gives one. None is required (a server may trust the
 * client's certificate, or pg may read a .pgpass file), but compose's public password is refused.
 */
export function databaseCredentialChecks(config: { databaseUrl: string }): SecretCheck[] {
  return [
    {
      variable: "DATABASE_URL's password",
      value: urlPassword(config.databaseUrl),
      optional: true,
      developmentDefaults: DEVELOPMENT_DATABASE_PASSWORDS,
    },
  ];
}

function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    // Not a URL pg could read either: the connection names the problem at start.
    return undefined;
  }
}
