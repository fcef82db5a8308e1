import { removeBus } from '@payments/test-support/bus-provision';
import { randomBytes } from 'node:crypto';
import { loadBankSandboxConfig, startBankSandbox } from '@payments/bank-sandbox';
import { loadBookletConfig, startBookletService, type RunningBookletService } from '@payments/booklet-svc';
import { loadCallbackConfig, startCallbackService, type RunningCallbackService } from '@payments/callback-svc';
import {
  loadReceivablesConfig,
  startReceivablesService,
  type RunningReceivablesService,
} from '@payments/receivables-svc';
import { loadClientsConfig, startClientsService, type RunningClientsService } from '@payments/clients-svc';
import type { AuthenticateResponse } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { createTestDatabase, ensureDatabase } from '@payments/db';
import { appDatabaseUrl, migrateAll } from '@payments/scripts/migrate';
import {
  createTenant,
  loadGatewayConfig,
  openAdminDatabase,
  startGateway,
  type RunningGateway,
} from '@payments/gateway';
import { createLogger } from '@payments/logger';
import { loadCommonConfig } from '@payments/config';
import { provisionFromConfig } from '@payments/gateway/src/transport/bus/bus-provision';
import { PaymentsClient } from '@payments/sdk';
import { ApiClient } from './api-client';
import { freePort } from '@payments/test-support/free-port';

export interface TestSystem {
  databaseUrl: string;
  busPrefix: string;
  gateway: RunningGateway;
  clients?: RunningClientsService;
  callbacks?: RunningCallbackService;
  receivables?: RunningReceivablesService;
  booklets?: RunningBookletService;
  /** Base URL of the bank sandbox, when started. */
  sandboxUrl?: string;
  /** The environment every app of this system was started with. */
  env: Record<string, string>;
  api: ApiClient;
  /** A new tenant, authenticated: its integration token and an API client carrying its JWT. */
  newTenant(name?: string): Promise<TestTenant>;
  stop(): Promise<void>;
}

export interface TestTenant {
  tenantId: string;
  integrationToken: string;
  tokenId: string;
  signingSecret: string;
  accessToken: string;
  /** Raw HTTP with the JWT: for what an SDK would not send (bad bodies, odd headers) and exact answers. */
  api: ApiClient;
  /** The tenant as an ERP on @payments/sdk sees it: typed, idempotent, retrying, renewing its JWT. */
  sdk: PaymentsClient;
}

export interface SystemOptions {
  /** Extra environment for every app (e.g. JWT_TTL_SECONDS, RATE_LIMIT_PER_SECOND). */
  env?: Record<string, string>;
  /** Extra environment for one app, over `env` (e.g. each service's own NATS_USER and NATS_PASSWORD). */
  appEnv?: Partial<
    Record<'gateway' | 'clients-svc' | 'receivables-svc' | 'booklet-svc' | 'callback-svc', Record<string, string>>
  >;
  /** Leave clients-svc out (to see the gateway answer 503). */
  withoutClients?: boolean;
  /** Start callback-svc in this process too. */
  withCallbacks?: boolean;
  /** Logger for callback-svc (to read what it logs). */
  callbackLogger?: Logger;
  /** Start the bank sandbox and receivables-svc (and callback-svc) too: the whole charge path. */
  withReceivables?: boolean;
  /** Start booklet-svc too (with the receivables path). */
  withBooklets?: boolean;
  /** Start the bank sandbox but leave receivables-svc to the test (e.g. as its own process). */
  withSandboxOnly?: boolean;
  /**
   * Run against this database (created if missing, never dropped), e.g. one on a private cluster the
   * test stops and starts; by default a throw-away database on the shared server.
   */
  databaseUrl?: string;
  /**
   * Extra environment for the provisioning step (`npm run admin -- bus provision`, run in this process
   * before any app), over `env`: the provisioning user's login (NATS_USER=admin, NATS_PASSWORD) on a
   * NATS that checks logins.
   */
  provisionEnv?: Record<string, string>;
}

/** A free TCP port (to wire the sandbox's webhook to receivables-svc before either starts). */
export { freePort };

/**
 * The real system for one test file: its own Postgres database and its own NATS subject prefix, so
 * test projects running in parallel never see each other; real HTTP on an ephemeral port.
 */
export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    return await startSystemTracked(options, started);
  } catch (err) {
    // A half-started system must not keep jest alive: stop what did start.
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    throw err;
  }
}

async function startSystemTracked(
  options: SystemOptions,
  started: Array<{ stop(): Promise<void> }>,
): Promise<TestSystem> {
  const steps = new StartupSteps();
  const given = options.databaseUrl;
  const database = given
    ? await steps.run('ensure database', () => givenDatabase(given))
    : await steps.run('create database', () => createTestDatabase(undefined, process.env.TEST_TEMPLATE_DATABASE));
  started.push({ stop: database.drop });
  const busPrefix = `t${randomBytes(5).toString('hex')}`;
  const charges = options.withReceivables || options.withSandboxOnly;
  const receivablesPort = charges ? await freePort() : 0;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    BUS_TIMEOUT_MS: '5000',
    RECEIVABLES_PORT: String(receivablesPort),
    BANK_SANDBOX_PORT: '0',
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    BOOKLET_PORT: '0',
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${receivablesPort}/provider/webhooks/bank-sandbox`,
    ...options.env,
  };
  // The apps only check their schema at start: migrated first (`npm run migrate`), as npm start and
  // the deploys do; each app then logs in as its own role.
  await steps.run('migrate', () => migrateAll({ NODE_ENV: 'development', ...env }));
  // The apps only check the bus at start (streams, consumers, claim stores): provisioned first, as
  // npm start and the deploys do.
  await steps.run('bus provision', () => provisionFromConfig(loadCommonConfig({ ...env, ...options.provisionEnv })));
  const sandbox = charges
    ? await steps.run('bank-sandbox', () =>
        startBankSandbox(
          loadBankSandboxConfig({ ...env, DATABASE_URL: appDatabaseUrl('bank-sandbox', database.url) }),
          createLogger('bank-sandbox', env.LOG_LEVEL),
        ),
      )
    : undefined;
  if (sandbox) started.push(sandbox);
  if (sandbox) env.PROVIDER_BASE_URL = sandbox.url;
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL);
  const envOf = (app: keyof NonNullable<SystemOptions['appEnv']>) => ({
    ...env,
    DATABASE_URL: appDatabaseUrl(app, database.url),
    ...options.appEnv?.[app],
  });
  const clients = options.withoutClients
    ? undefined
    : await steps.run('clients-svc', () =>
        startClientsService(loadClientsConfig(envOf('clients-svc')), logger('clients-svc')),
      );
  if (clients) started.push(clients);
  const gateway = await steps.run('gateway', () =>
    startGateway(loadGatewayConfig(envOf('gateway')), logger('gateway')),
  );
  started.push(gateway);
  // Download links must point at this gateway's ephemeral port.
  const booklets = options.withBooklets
    ? await steps.run('booklet-svc', () =>
        startBookletService(
          loadBookletConfig({ ...envOf('booklet-svc'), PUBLIC_BASE_URL: gateway.url }),
          logger('booklet-svc'),
        ),
      )
    : undefined;
  if (booklets) started.push(booklets);
  const callbacks =
    options.withCallbacks || options.withReceivables
      ? await steps.run('callback-svc', () =>
          startCallbackService(
            loadCallbackConfig(envOf('callback-svc')),
            options.callbackLogger ?? logger('callback-svc'),
          ),
        )
      : undefined;
  if (callbacks) started.push(callbacks);
  const receivables = options.withReceivables
    ? await steps.run('receivables-svc', () =>
        startReceivablesService(
          loadReceivablesConfig({ ...envOf('receivables-svc'), PUBLIC_BASE_URL: gateway.url }),
          logger('receivables-svc'),
        ),
      )
    : undefined;
  if (receivables) started.push(receivables);
  steps.reportIfSlow();
  const api = new ApiClient(gateway.url);
  const adminDb = await openAdminDatabase(database.url);

  return {
    databaseUrl: database.url,
    busPrefix,
    gateway,
    clients,
    callbacks,
    receivables,
    booklets,
    sandboxUrl: sandbox?.url,
    env,
    api,
    async newTenant(name = 'Tenant') {
      const t = await createTenant(adminDb, name);
      const auth = await api.post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
        authorization: `Bearer ${t.integration_token}`,
      });
      if (auth.status !== 200) throw new Error(`authenticate failed: ${auth.status} ${auth.text}`);
      const accessToken = auth.json.access_token;
      return {
        tenantId: t.tenant_id,
        integrationToken: t.integration_token,
        tokenId: t.token_id,
        signingSecret: t.signing_secret,
        accessToken,
        api: api.withToken(accessToken),
        sdk: new PaymentsClient({ baseUrl: gateway.url, integrationToken: t.integration_token }),
      };
    },
    async stop() {
      // Each step runs even if an earlier one failed, so jest never hangs on an open handle.
      await Promise.allSettled([
        gateway.stop(),
        clients?.stop(),
        callbacks?.stop(),
        receivables?.stop(),
        booklets?.stop(),
      ]);
      await sandbox?.stop().catch(() => undefined);
      await adminDb.destroy().catch(() => undefined);
      await deleteBusStreams(busPrefix, env.NATS_URL).catch(() => undefined);
      await database.drop().catch(() => undefined);
    },
  };
}

/** A database the test owns: created when missing, left in place at stop. */
async function givenDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  await ensureDatabase(url);
  return { url, drop: async () => undefined };
}

/**
 * Times each startup step. A step that hangs fails with its name (and the times of those before it),
 * rather than as an anonymous beforeAll timeout; a slow startup prints its steps.
 */
class StartupSteps {
  private readonly done: string[] = [];
  private readonly startedAt = Date.now();

  async run<T>(name: string, start: () => Promise<T>, timeoutMs = 45_000): Promise<T> {
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `startSystem: ${name} did not start within ${timeoutMs} ms (before it: ${this.done.join(', ') || 'nothing'})`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([start(), timeout]);
    } finally {
      clearTimeout(timer);
      this.done.push(`${name} ${Date.now() - t0} ms`);
    }
  }

  reportIfSlow(thresholdMs = 15_000): void {
    const total = Date.now() - this.startedAt;
    if (total > thresholdMs) console.warn(`startSystem took ${total} ms: ${this.done.join(', ')}`);
  }
}

/** Removes the JetStream streams (and object stores) a test run created under its prefix. */
export const deleteBusStreams = removeBus;
