import { randomBytes } from 'node:crypto';
import { loadBankSandboxConfig, startBankSandbox } from '@payments/bank-sandbox';
import { loadBookletConfig, startBookletService } from '@payments/booklet-svc';
import { loadCallbackConfig, startCallbackService } from '@payments/callback-svc';
import { loadClientsConfig, startClientsService } from '@payments/clients-svc';
import type { AuthenticateResponse } from '@payments/contracts';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import { loadReceivablesConfig, startReceivablesService } from '@payments/receivables-svc';
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';
import { appDatabaseUrl, migrateAll } from '@payments/scripts/migrate';
import { ApiClient } from '../support/api-client';
import { clientPayload } from '../support/fixtures';
import { PrivatePostgres } from '../support/private-postgres';
import { waitFor } from '../support/receiver';
import { deleteBusStreams } from '../support/system';

// The must-show: /readyz answers 503 while Postgres is stopped, and 200 again after it is
// back, without a restart. The apps run against a Postgres cluster of this test's own, so stopping
// it cannot disturb the test files running in parallel against the shared one.

interface ReadyzBody {
  status: string;
  checks: Record<string, { status: string; error?: string }>;
  failing?: string[];
}

/** The apps whose /readyz is on an ops server of their own (libs/health startOpsServer). */
const OPS_SERVERS = new Set(['clients-svc', 'callback-svc', 'booklet-svc']);

let postgres: PrivatePostgres | undefined;
const apps: Array<{ name: string; url: string; usesNats: boolean; stop(): Promise<void> }> = [];
const busPrefix = `t${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  postgres = await PrivatePostgres.create();
  const env = {
    DATABASE_URL: postgres.url('readiness'),
    BUS_PREFIX: busPrefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    BOOKLET_PORT: '0',
    RECEIVABLES_PORT: '0',
    BANK_SANDBOX_PORT: '0',
    CALLBACK_POLL_INTERVAL_MS: '100',
  };
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL);
  // The services only check their schema and the bus at start: migrated and provisioned first, as npm
  // start and the deploys do; each app then logs in as its own role.
  await migrateAll({ NODE_ENV: 'development', ...env });
  await provisionBusFor(env);
  const as = (app: string) => ({ ...env, DATABASE_URL: appDatabaseUrl(app, env.DATABASE_URL) });
  // Every app, each pushed as it starts, so afterAll stops whatever did start even if a later one fails.
  // Their background loops (outbox relays, callback polling, webhook dispatch) meet the outage too.
  const clients = await startClientsService(loadClientsConfig(as('clients-svc')), logger('clients-svc'));
  apps.push({ name: 'clients-svc', url: clients.url, usesNats: true, stop: () => clients.stop() });
  const callbacks = await startCallbackService(loadCallbackConfig(as('callback-svc')), logger('callback-svc'));
  apps.push({ name: 'callback-svc', url: callbacks.url, usesNats: true, stop: () => callbacks.stop() });
  const gateway = await startGateway(loadGatewayConfig(as('gateway')), logger('gateway'));
  apps.push({ name: 'gateway', url: gateway.url, usesNats: true, stop: () => gateway.stop() });
  const sandbox = await startBankSandbox(loadBankSandboxConfig(as('bank-sandbox')), logger('bank-sandbox'));
  apps.push({ name: 'bank-sandbox', url: sandbox.url, usesNats: false, stop: () => sandbox.stop() });
  const receivables = await startReceivablesService(
    loadReceivablesConfig({ ...as('receivables-svc'), PROVIDER_BASE_URL: sandbox.url }),
    logger('receivables-svc'),
  );
  apps.push({ name: 'receivables-svc', url: receivables.url, usesNats: true, stop: () => receivables.stop() });
  const booklets = await startBookletService(
    loadBookletConfig({ ...as('booklet-svc'), PUBLIC_BASE_URL: gateway.url }),
    logger('booklet-svc'),
  );
  apps.push({ name: 'booklet-svc', url: booklets.url, usesNats: true, stop: () => booklets.stop() });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(apps.map((a) => a.stop()));
  await postgres?.destroy();
  await deleteBusStreams(busPrefix).catch(() => undefined);
}, 120_000);

async function readyz(url: string): Promise<{ status: number; contentType: string | null; body: ReadyzBody }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, contentType: res.headers.get('content-type'), body: (await res.json()) as ReadyzBody };
}

it('answers /readyz 503 while Postgres is stopped, and 200 again after it is back, without a restart', async () => {
  for (const app of apps) {
    const ready = await readyz(app.url);
    expect({ app: app.name, status: ready.status, body: ready.body }).toEqual({
      app: app.name,
      status: 200,
      // The bank sandbox has no NATS: its readiness is its own Postgres.
      body: {
        status: 'ok',
        checks: {
          postgres: { status: 'ok' },
          ...(app.usesNats ? { nats: { status: 'ok' } } : {}),
          migrations: { status: 'ok' },
        },
      },
    });
  }

  await postgres!.stop();
  for (const app of apps) {
    const down = await readyz(app.url);
    expect({ app: app.name, status: down.status }).toEqual({ app: app.name, status: 503 });
    expect(down.contentType).toContain('application/json');
    expect(down.body.status).toBe('unavailable');
    expect(down.body.failing).toEqual(['postgres']);
    expect(down.body.checks.postgres.status).toBe('failing');
    // Ports the public reaches (the gateway's API, the provider webhooks, the sandbox) name the failing
    // check only; the ops servers of the NATS-only services also say why.
    if (OPS_SERVERS.has(app.name)) expect(down.body.checks.postgres.error).toEqual(expect.any(String));
    else expect(down.body.checks.postgres).toEqual({ status: 'failing' });
    if (app.usesNats) expect(down.body.checks.nats).toEqual({ status: 'ok' });
    // Alive all the same: an orchestrator must not restart a process for its database's outage.
    const alive = await fetch(`${app.url}/healthz`);
    expect(alive.status).toBe(200);
    expect(await alive.json()).toMatchObject({ status: 'ok' });
    // Metrics still answer; database-backed gauges just show nothing meanwhile.
    expect((await fetch(`${app.url}/metrics`)).status).toBe(200);
  }

  // Stay down a moment, so the background loops (outbox relays, callback polling, webhook dispatch) meet the outage too.
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await readyz(apps[0].url)).status).toBe(503);
  await postgres!.start();
  for (const app of apps) {
    await waitFor(async () => (await readyz(app.url)).status === 200, 20_000, `${app.name} ready again`);
  }
  // Really usable again, not only ready: the gateway authenticates from its database, and a client
  // goes through clients-svc (NATS) into its schema.
  const admin = await openAdminDatabase(postgres!.url('readiness'));
  try {
    const tenant = await createTenant(admin, 'Readiness');
    const api = new ApiClient(apps.find((a) => a.name === 'gateway')!.url);
    const auth = await api.post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
      authorization: `Bearer ${tenant.integration_token}`,
    });
    expect(auth.status).toBe(200);
    expect(
      (await api.withToken(auth.json.access_token).postIdempotent('/api/v1/clients', [clientPayload()])).status,
    ).toBe(201);
  } finally {
    await admin.destroy();
  }
}, 120_000);
