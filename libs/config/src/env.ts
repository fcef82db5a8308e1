import { readFileSync } from 'node:fs';

/**
 * Typed reads of environment variables with defaults that work on a developer machine.
 * A present but unusable value fails start-up with a message naming the variable.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/**
 * The settings that hold a secret. Each may come from a file instead: `<NAME>_FILE` names it (a mounted
 * Kubernetes Secret, a Docker secret), so the value is in no process's environment, where `ps e`, a
 * crash report or a child process would see it. The JWT keys are not here: the gateway reads their
 * `_FILE` forms itself, as PEM files kept exactly as written.
 */
export const SECRET_SETTINGS = [
  'DATABASE_URL',
  'MIGRATION_DATABASE_URL',
  'NATS_PASSWORD',
  'DOWNLOAD_LINK_SECRET',
  'CREDENTIALS_ENCRYPTION_KEY',
  'CREDENTIALS_PREVIOUS_KEYS',
  'PROVIDER_API_KEY',
  'PROVIDER_WEBHOOK_SECRET',
  'CONSOLE_SESSION_KEY',
  'BANK_SANDBOX_API_KEY',
  'BANK_SANDBOX_WEBHOOK_SECRET',
] as const;

/** The variable that names a secret setting's file: `DATABASE_URL_FILE` for `DATABASE_URL`. */
export function secretFileVariable(name: string): string {
  return `${name}_FILE`;
}

const SECRETS: ReadonlySet<string> = new Set(SECRET_SETTINGS);

/**
 * A setting's raw value: its variable, or for a secret setting the file its `_FILE` variable names,
 * without the line end(s) an editor or `echo` leaves at the end. `_FILE` is only looked up when it is
 * in the environment. Both set is refused, whatever the values: which one wins would be a guess.
 */
function rawSetting(name: string, env: Env): string | undefined {
  const fileVariable = secretFileVariable(name);
  if (!SECRETS.has(name) || !(fileVariable in env)) return env[name];
  const path = env[fileVariable];
  if (path === undefined || path === '') return env[name];
  const inline = env[name];
  if (inline !== undefined && inline !== '')
    throw new ConfigError(`${name} and ${fileVariable} are both set: set one of them`);
  try {
    return readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
  } catch (err) {
    throw new ConfigError(`${fileVariable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

export function envString(name: string, fallback: string, env: Env = process.env): string {
  const value = rawSetting(name, env);
  return value === undefined || value === '' ? fallback : value;
}

export function envOptional(name: string, env: Env = process.env): string | undefined {
  const value = rawSetting(name, env);
  return value === undefined || value === '' ? undefined : value;
}

export function envInt(name: string, fallback: number, env: Env = process.env, min = 0): number {
  const raw = envOptional(name, env);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

export function envBool(name: string, fallback: boolean, env: Env = process.env): boolean {
  const raw = envOptional(name, env);
  if (raw === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function envEnum<T extends string>(name: string, allowed: readonly T[], fallback: T, env: Env = process.env): T {
  const raw = envOptional(name, env);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** A comma-separated list of positive integers, e.g. a retry schedule in milliseconds. */
export function envIntList(name: string, fallback: number[], env: Env = process.env): number[] {
  const raw = envOptional(name, env);
  if (raw === undefined) return fallback;
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < 0)) {
    throw new ConfigError(`${name} must be a comma-separated list of non-negative integers, got "${raw}"`);
  }
  return values;
}
