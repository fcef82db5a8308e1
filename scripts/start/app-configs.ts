/**
 * Every app's own configuration loader, run by `npm start` before it starts anything: a setting an app
 * would refuse (in production, every missing or development secret) is reported for every app at
 * once, instead of only by the first app to stop while the others are being stopped.
 */
import { loadBankSandboxConfig } from '@payments/bank-sandbox/src/config';
import { loadBookletConfig } from '@payments/booklet-svc/src/config';
import { loadCallbackConfig } from '@payments/callback-svc/src/config';
import { loadClientsConfig } from '@payments/clients-svc/src/config';
import { loadConsoleConfig } from '@payments/console/src/config';
import { loadGatewayConfig } from '@payments/gateway/src/config';
import { loadReceivablesConfig } from '@payments/receivables-svc/src/config';
import { describeStartupFailure } from '@payments/lifecycle';

type Env = Record<string, string | undefined>;

const LOADERS: Record<string, (env: Env) => unknown> = {
  'clients-svc': loadClientsConfig,
  'receivables-svc': loadReceivablesConfig,
  'booklet-svc': loadBookletConfig,
  'callback-svc': loadCallbackConfig,
  'bank-sandbox': loadBankSandboxConfig,
  gateway: loadGatewayConfig,
  console: loadConsoleConfig,
};

/** One line per app that would refuse `env`, naming the app and what it says. */
export function appConfigProblems(apps: readonly string[], env: Env): string[] {
  return apps.flatMap((app) => {
    const load = LOADERS[app];
    if (!load) return [];
    try {
      load(env);
      return [];
    } catch (err) {
      return [`${app}: ${describeStartupFailure(err)?.message ?? (err instanceof Error ? err.message : String(err))}`];
    }
  });
}
