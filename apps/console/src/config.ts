import { randomBytes } from 'node:crypto';
import {
  ConfigError,
  envBool,
  envInt,
  envOptional,
  envString,
  requireProductionSecrets,
  runMode,
  type RunMode,
} from '@payments/config';
import { GATEWAY_TIMEOUT_MS } from './gateway/problem';

type Env = Record<string, string | undefined>;

/**
 * The console's settings. It reads no database or bus setting: it talks to the gateway's HTTP APIs
 * only. docs/configuration.md lists each variable with its default.
 */
export interface ConsoleConfig {
  nodeEnv: RunMode;
  logLevel: string;
  shutdownGraceMs: number;
  /** CONSOLE_PORT (3700). */
  port: number;
  /** GATEWAY_URL: the gateway's public API (tenant pages). */
  gatewayUrl: string;
  /** GATEWAY_ADMIN_URL: the gateway's admin API (operator pages); keep it private, as ADMIN_PORT. */
  gatewayAdminUrl: string;
  /**
   * CONSOLE_GATEWAY_TIMEOUT_MS (10 s): the deadline of one call to either API; past it the page says
   * the gateway did not answer in time.
   */
  gatewayTimeoutMs: number;
  /**
   * TRUSTED_PROXY_HOPS (0): proxies in front that append to X-Forwarded-For; the client address is that
   * many entries from the right. The console passes that address on to the admin API, whose sign-in
   * limits count per person and per address.
   */
  trustedProxyHops: number;
  /** CONSOLE_SESSION_KEY (32 bytes, base64): seals the flash cookie (the session cookie holds only an id). */
  sessionKey: Buffer;
  /** True when no key was set (development): a random one per process. */
  sessionKeyIsEphemeral: boolean;
  /**
   * CONSOLE_SECURE_COOKIES (true in production, false in development): cookies are Secure and the
   * session cookie is `__Host-console_session` (the console is served over https, e.g. behind a proxy).
   */
  secureCookies: boolean;
}

const SESSION_KEY_BYTES = 32;

/**
 * Development without CONSOLE_SESSION_KEY: one random key for this process (so its sessions end when it
 * stops, and two instances do not share them). Drawn once, so loading the settings twice agrees.
 */
const PROCESS_SESSION_KEY = randomBytes(SESSION_KEY_BYTES);

export function loadConsoleConfig(env: Env = process.env): ConsoleConfig {
  const nodeEnv = runMode(env);
  const rawKey = envOptional('CONSOLE_SESSION_KEY', env);
  requireProductionSecrets(nodeEnv, [
    {
      variable: 'CONSOLE_SESSION_KEY',
      value: rawKey,
      hint: 'openssl rand -base64 32, the same on every console instance',
    },
  ]);
  return {
    nodeEnv,
    logLevel: envString('LOG_LEVEL', 'info', env),
    shutdownGraceMs: envInt('SHUTDOWN_GRACE_MS', 15_000, env, 0),
    port: envInt('CONSOLE_PORT', 3700, env),
    gatewayUrl: baseUrl('GATEWAY_URL', 'http://127.0.0.1:3000', env),
    gatewayAdminUrl: baseUrl('GATEWAY_ADMIN_URL', 'http://127.0.0.1:3600', env),
    gatewayTimeoutMs: envInt('CONSOLE_GATEWAY_TIMEOUT_MS', GATEWAY_TIMEOUT_MS, env, 1),
    trustedProxyHops: envInt('TRUSTED_PROXY_HOPS', 0, env, 0),
    sessionKey: rawKey === undefined ? PROCESS_SESSION_KEY : sessionKey(rawKey),
    sessionKeyIsEphemeral: rawKey === undefined,
    secureCookies: envBool('CONSOLE_SECURE_COOKIES', nodeEnv === 'production', env),
  };
}

function sessionKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (
    key.length !== SESSION_KEY_BYTES ||
    key.toString('base64').replace(/=+$/, '') !== base64.trim().replace(/=+$/, '')
  )
    throw new ConfigError(`CONSOLE_SESSION_KEY must be ${SESSION_KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
  return key;
}

function baseUrl(name: string, fallback: string, env: Env): string {
  const value = envString(name, fallback, env);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}
