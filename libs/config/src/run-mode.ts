import { ConfigError, envOptional } from './env';

type Env = Record<string, string | undefined>;

export type RunMode = 'development' | 'production';

/**
 * NODE_ENV's run mode: production unless it says `development` or `test` (jest sets `test`; for us that
 * is development). An environment object that leaves NODE_ENV unset (a test building one for an app it
 * starts in-process) takes the mode of this process, so it is production only where the process is.
 */
export function runMode(env: Env = process.env): RunMode {
  const raw = envOptional('NODE_ENV', env) ?? (env === process.env ? undefined : envOptional('NODE_ENV', process.env));
  if (raw === undefined || raw === 'production') return 'production';
  if (raw === 'development' || raw === 'test') return 'development';
  throw new ConfigError(`NODE_ENV must be one of production, development, test, got "${raw}"`);
}

/**
 * The environment of a developer's tool (`npm start`, the demo, the admin CLI, the benches): NODE_ENV
 * defaults to development there, so `NODE_ENV=production npm start` is the one way to a production start.
 */
export function developmentUnlessSet(env: Env = process.env): Env {
  return envOptional('NODE_ENV', env) === undefined ? { ...env, NODE_ENV: 'development' } : env;
}
