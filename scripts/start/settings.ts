/**
 * What `npm start` reads from the environment: the settings every service shares (it checks Postgres
 * and NATS with them, and waits SHUTDOWN_GRACE_MS when stopping), each app's port, and whether the
 * bank sandbox and receivables-svc were given each other's URL. docs/configuration.md lists them;
 * e2e/test/configuration-reference.test.ts holds the two to each other.
 */
import { envInt, loadCommonConfig, type CommonConfig } from '@payments/config';
import type { AppPort } from './ports';

type Env = Record<string, string | undefined>;

/**
 * Every app, in start order (only for the readability of the logs), with the variable of its port and
 * that variable's default in the app itself.
 */
export const APPS = [
  { app: 'clients-svc', variable: 'CLIENTS_PORT', fallback: 3300 },
  { app: 'receivables-svc', variable: 'RECEIVABLES_PORT', fallback: 3200 },
  { app: 'booklet-svc', variable: 'BOOKLET_PORT', fallback: 3500 },
  { app: 'callback-svc', variable: 'CALLBACK_PORT', fallback: 3400 },
  { app: 'bank-sandbox', variable: 'BANK_SANDBOX_PORT', fallback: 3100 },
  { app: 'gateway', variable: 'PORT', fallback: 3000 },
  { app: 'console', variable: 'CONSOLE_PORT', fallback: 3700 },
] as const;

export interface StartSettings {
  common: CommonConfig;
  ports: AppPort[];
  /** URLs the apps get on top of the environment (see peerUrls). */
  peerUrls: Record<string, string>;
}

/** Reads npm start's settings; a malformed one throws a ConfigError naming its variable. */
export function loadStartSettings(env: Env = process.env): StartSettings {
  const common = loadCommonConfig(env);
  const ports = APPS.map(({ app, variable, fallback }) => ({ app, variable, port: envInt(variable, fallback, env) }));
  return { common, ports, peerUrls: peerUrls(ports, env) };
}

/**
 * The bank sandbox and receivables-svc reach each other by URL; when only the ports are moved (a second
 * system beside the first), the URLs follow them unless set explicitly.
 */
function peerUrls(ports: readonly AppPort[], env: Env): Record<string, string> {
  const portOf = (variable: string) => ports.find((p) => p.variable === variable)?.port;
  const urls: Record<string, string> = {};
  // A port of 0 (any free port) is known only to the app itself: nothing to derive then.
  if (!env.PROVIDER_BASE_URL && portOf('BANK_SANDBOX_PORT'))
    urls.PROVIDER_BASE_URL = `http://127.0.0.1:${portOf('BANK_SANDBOX_PORT')}`;
  if (!env.BANK_SANDBOX_WEBHOOK_URL && portOf('RECEIVABLES_PORT')) {
    urls.BANK_SANDBOX_WEBHOOK_URL = `http://127.0.0.1:${portOf('RECEIVABLES_PORT')}/provider/webhooks/bank-sandbox`;
  }
  return urls;
}
