import { randomBytes } from 'node:crypto';
import { connect } from 'nats';
import { loadCallbackConfig, startCallbackService, type RunningCallbackService } from '@payments/callback-svc';
import { loadClientsConfig, startClientsService, type RunningClientsService } from '@payments/clients-svc';
import type { Logger } from '@payments/logger';
import { createTestDatabase } from '@payments/db';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway, type RunningGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import { ApiClient } from './api-client';

export interface TestSystem {
  databaseUrl: string;
  busPrefix: string;
  gateway: RunningGateway;
  clients?: RunningClientsService;
  callbacks?: RunningCallbackService;
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
  api: ApiClient;
}

export interface SystemOptions {
  /** Extra environment for every app (e.g. JWT_TTL_SECONDS, RATE_LIMIT_PER_SECOND). */
  env?: Record<string, string>;
  /** Leave clients-svc out (to see the gateway answer 503). */
  withoutClients?: boolean;
  /** Start callback-svc in this process too. */
  withCallbacks?: boolean;
  /** Logger for callback-svc (to read what it logs). */
  callbackLogger?: Logger;
}

/**
 * The real system for one test file: its own Postgres database and its own NATS subject prefix, so
 * test projects running in parallel never see each other; real HTTP on an ephemeral port.
 */
export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const database = await createTestDatabase();
  const busPrefix = `t${randomBytes(5).toString('hex')}`;
  const env = { DATABASE_URL: database.url, BUS_PREFIX: busPrefix, PORT: '0', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', BUS_TIMEOUT_MS: '5000', ...options.env };
  const logger = (name: string) => createLogger(name, env.LOG_LEVEL);
  const clients = options.withoutClients ? undefined : await startClientsService(loadClientsConfig(env), logger('clients-svc'));
  const gateway = await startGateway(loadGatewayConfig(env), logger('gateway'));
  const callbacks = options.withCallbacks ? await startCallbackService(loadCallbackConfig(env), options.callbackLogger ?? logger('callback-svc')) : undefined;
  const api = new ApiClient(gateway.url);
  const adminDb = await openAdminDatabase(database.url);

  return {
    databaseUrl: database.url,
    busPrefix,
    gateway,
    clients,
    callbacks,
    env,
    api,
    async newTenant(name = 'Tenant') {
      const t = await createTenant(adminDb, name);
      const auth = await api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${t.integration_token}` });
      if (auth.status !== 200) throw new Error(`authenticate failed: ${auth.status} ${auth.text}`);
      const accessToken = (auth.json as { access_token: string }).access_token;
      return { tenantId: t.tenant_id, integrationToken: t.integration_token, tokenId: t.token_id, signingSecret: t.signing_secret, accessToken, api: api.withToken(accessToken) };
    },
    async stop() {
      // Each step runs even if an earlier one failed, so jest never hangs on an open handle.
      await Promise.allSettled([gateway.stop(), clients?.stop(), callbacks?.stop()]);
      await adminDb.destroy().catch(() => undefined);
      await deleteBusStreams(busPrefix).catch(() => undefined);
      await database.drop().catch(() => undefined);
    },
  };
}

/** Removes the JetStream streams (and object stores) a test run created under its prefix. */
export async function deleteBusStreams(prefix: string): Promise<void> {
  const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.includes(prefix)) await jsm.streams.delete(stream.config.name);
    }
  } finally {
    await nc.drain();
  }
}
