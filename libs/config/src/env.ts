/**
 * Typed reads of environment variables with defaults that work on a developer machine.
 * A present but unusable value fails start-up with a message naming the variable.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

export function envString(name: string, fallback: string, env: Env = process.env): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function envOptional(name: string, env: Env = process.env): string | undefined {
  const value = env[name];
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
