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
  /** Its value; undefined or empty when unset. */
  value: string | undefined;
  /** Public values (the development defaults) it must not keep. */
  developmentDefaults?: readonly string[];
  /** What to set, shown when it is missing, e.g. `openssl rand -base64 32`. */
  hint?: string;
}

/** One line per offending variable (empty when production may start). */
export function productionSecretProblems(checks: readonly SecretCheck[]): string[] {
  return checks.flatMap(({ variable, value, developmentDefaults = [], hint }) => {
    if (value === undefined || value === '') return [`${variable} is missing${hint ? ` (${hint})` : ''}`];
    if (developmentDefaults.includes(value)) return [`${variable} is the public development default`];
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

/** The passwords docker-compose falls back to for each service's NATS user (public: in the repo). */
export const DEVELOPMENT_NATS_PASSWORDS = [
  'gateway',
  'clients-svc',
  'receivables-svc',
  'booklet-svc',
  'callback-svc',
  'admin',
].map((user) => `development-nats-${user}`);

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
