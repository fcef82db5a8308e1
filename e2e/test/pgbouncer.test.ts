// The whole system through a real PgBouncer in transaction mode, as behind a managed pooler
// (docs/architecture.md): migrated over a direct connection, then every app logs in through the
// pooler as its own role, whose search_path and timeouts are role settings. Startup options are
// dropped on the way, so an app that chose its schema by them would land in public and fail here.
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import type { CancelResponse, ConsultResult, ReceivablesCreateResponse, SearchResultItem } from '@payments/contracts';
import { createTestDatabase, serviceDatabaseUrl, serviceRoleName } from '@payments/db';
import { APP_SCHEMAS } from '@payments/scripts/migrate';
import { describeWithPgBouncer, PgBouncer } from '@payments/test-support/pgbouncer';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { queryRows } from '../support/db-probe';
import {
  asRegistered,
  isCancellationResult,
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type SystemOptions, type TestSystem, type TestTenant } from '../support/system';

const FAST = { CALLBACK_RETRY_SCHEDULE_MS: '200,400,800', CALLBACK_POLL_INTERVAL_MS: '50', PROVIDER_RETRIES: '0' };
/** Emission date of this file's charges: the search finds exactly them. */
const EMITTED = '2026-07-13';
type AppWithEnv = keyof NonNullable<SystemOptions['appEnv']>;
const APPS: AppWithEnv[] = ['gateway', 'clients-svc', 'receivables-svc', 'booklet-svc', 'callback-svc'];
const ROLES = Object.values(APP_SCHEMAS).map(serviceRoleName);

async function adminRows<T>(bouncer: PgBouncer, command: string): Promise<T[]> {
  // The admin console speaks the simple query protocol only: no parameters.
  const client = new pg.Client({ connectionString: bouncer.adminUrl });
  await client.connect();
  try {
    return (await client.query(command)).rows as T[];
  } finally {
    await client.end();
  }
}

describeWithPgBouncer('the system through PgBouncer in transaction mode', () => {
  let database: { url: string; drop: () => Promise<void> };
  let bouncer: PgBouncer;
  let system: TestSystem;
  let tenant: TestTenant;
  let receiver: CallbackReceiver;

  beforeAll(async () => {
    database = await createTestDatabase();
    bouncer = await PgBouncer.start({ upstream: database.url, users: ['postgres', ...ROLES] });
    const pooled = bouncer.url('postgres');
    // Each app's URL goes through the pooler, as its own role; the migration goes direct.
    const appEnv = Object.fromEntries(
      APPS.map((app) => [app, { DATABASE_URL: serviceDatabaseUrl(pooled, APP_SCHEMAS[app]) }]),
    ) as SystemOptions['appEnv'];
    system = await startSystem({
      withReceivables: true,
      withBooklets: true,
      env: FAST,
      databaseUrl: database.url,
      appEnv,
    });
    tenant = await system.newTenant('Pooled');
    receiver = await new CallbackReceiver().start();
  }, 180_000);

  afterAll(async () => {
    await receiver?.stop();
    await system?.stop();
    await bouncer?.stop();
    await database?.drop().catch(() => undefined);
  });

  it('drops a schema chosen by startup options: such a client gets the default search_path', async () => {
    const client = new pg.Client({ connectionString: bouncer.url('postgres'), options: '-c search_path=receivables' });
    await client.connect();
    try {
      expect((await client.query<{ search_path: string }>('show search_path')).rows[0].search_path).toBe(
        '"$user", public',
      );
      await expect(client.query('select 1 from receivables_key_probe_that_is_not_there')).rejects.toThrow();
    } finally {
      await client.end();
    }
    // The role's own setting survives the pooler: that is how each service finds its schema.
    const role = new pg.Client({ connectionString: serviceDatabaseUrl(bouncer.url('postgres'), 'receivables') });
    await role.connect();
    try {
      expect((await role.query<{ search_path: string }>('show search_path')).rows[0].search_path).toBe('receivables');
    } finally {
      await role.end();
    }
  });

  it('registers charges, calls back signed, consults, searches, pays and cancels', async () => {
    const client = clientPayload();
    expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    const batch = [
      receivablePayload(client.client_id, receiver.url, { payment_method: 1, emission_date: EMITTED, value: 101.5 }),
      receivablePayload(client.client_id, receiver.url, { payment_method: 3, emission_date: EMITTED, value: 202 }),
      receivablePayload(client.client_id, receiver.url, { payment_method: 1, emission_date: EMITTED, value: 303 }),
    ];
    const created = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', batch);
    expect(created.status).toBe(202);
    const ids = batch.map((b) => b.account_receivable_id);
    const callbacksFor = (id: string) => receivableCallbacks(receiver, id);
    await waitFor(() => ids.every((id) => callbacksFor(id).some(isRegistered)), 60_000, 'registered callbacks');

    const consulted = await tenant.api.post<ConsultResult>(`/api/v1/accounts-receivable/${ids[0]}/consult-transaction`);
    expect(consulted.status).toBe(200);
    expect(consulted.json).toMatchObject({
      accounts_receivable_id: ids[0],
      status_payment: 'Pendente',
      amount_due: 101.5,
    });

    const search = await tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
      state: 'all',
      start_date: EMITTED,
      end_date: EMITTED,
    });
    expect(search.status).toBe(200);
    expect(search.json.map((r) => r.accounts_receivable_id).sort()).toEqual([...ids].sort());

    const ourNumber = asRegistered(callbacksFor(ids[1]).find(isRegistered)).payment_data.our_number;
    expect((await payAtSandbox(system.sandboxUrl ?? '', ourNumber, 'pix')).status).toBe(200);
    await waitFor(() => callbacksFor(ids[1]).some(isPaid), 30_000, 'paid callback');

    const cancel = await tenant.api.postIdempotent<CancelResponse>(
      `/api/v1/accounts-receivable/${ids[2]}/cancel`,
      undefined,
    );
    expect(cancel.status).toBe(202);
    await waitFor(() => callbacksFor(ids[2]).some(isCancellationResult), 30_000, 'cancellation callback');
    expect(callbacksFor(ids[2]).find(isCancellationResult)).toMatchObject({ status: 'success' });

    const states = await Promise.all(
      ids.map(
        async (id) =>
          (await tenant.api.post<ConsultResult>(`/api/v1/accounts-receivable/${id}/consult-transaction`)).json
            .status_payment,
      ),
    );
    expect(states).toEqual(['Pendente', 'Aprovada', 'Cancelada']);
    for (const record of receiver.received) {
      expect(new Webhook(tenant.signingSecret).verify(record.body, record.headers)).toBeTruthy();
    }
  });

  it('went through the pooler: every service role pooled there, and each of its sessions is a pooler server connection', async () => {
    const stats = await adminRows<{ database: string; total_xact_count: string }>(bouncer, 'SHOW STATS');
    expect(Number(stats.find((s) => s.database === bouncer.database)?.total_xact_count)).toBeGreaterThan(100);
    const pools = await adminRows<{ database: string; user: string }>(bouncer, 'SHOW POOLS');
    const pooledRoles = pools.filter((p) => p.database === bouncer.database).map((p) => p.user);
    for (const app of APPS) expect(pooledRoles).toContain(serviceRoleName(APP_SCHEMAS[app]));

    // Postgres's own view: each backend of an app's role in this database is one of PgBouncer's
    // server connections (its backend pid), none a direct login. The test's own tenant setup
    // (startSystem's admin connection, as the admin CLI) logs in directly and is left out.
    const backends = await queryRows<{ pid: number; usename: string; application_name: string }>(
      database.url,
      `select pid, usename, application_name from pg_stat_activity
        where datname = current_database() and usename = any($1) and application_name <> 'admin-cli'`,
      [APPS.map((app) => serviceRoleName(APP_SCHEMAS[app]))],
    );
    const servers = await adminRows<{ remote_pid: string }>(bouncer, 'SHOW SERVERS');
    const pooledPids = new Set(servers.map((s) => Number(s.remote_pid)));
    expect(backends.length).toBeGreaterThan(0);
    expect(backends.filter((b) => !pooledPids.has(b.pid))).toEqual([]);
  });
});
