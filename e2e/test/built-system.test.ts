import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AuthenticateResponse, BookletResponse } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { appDatabaseUrl } from '@payments/scripts/migrate';
import { download } from '../support/download';
import { ApiClient } from '../support/api-client';
import { bookletSent, isReceivableCallback, receivedCallbacks } from '../support/booklet-callbacks';
import {
  BuiltApp,
  builtAppEnv,
  builtFile,
  externalsResolvedElsewhere,
  PORT_VARIABLES,
  type AppName,
} from '../support/built-app';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { deleteBusStreams, freePort } from '../support/system';

// The system as production runs it: every app started from its build output (dist/apps/<app>/main.js,
// made by the apps' `build` targets, which this project's test target depends on) with plain node, each
// in its own process, against its own database and NATS subject prefix.

const APPS = Object.keys(PORT_VARIABLES) as AppName[];
const apps: BuiltApp[] = [];
let database: { url: string; drop: () => Promise<void> } | undefined;
let busPrefix: string | undefined;
let receiver: CallbackReceiver | undefined;
let env: Record<string, string>;
let gateway: BuiltApp;

beforeAll(async () => {
  for (const app of APPS) builtFile(app); // not built: say so, rather than time out
  const misresolved = APPS.flatMap((app) => externalsResolvedElsewhere(app).map((problem) => `${app}: ${problem}`));
  if (misresolved.length > 0) {
    throw new Error(
      `built apps would load other copies of npm packages than their sources:\n${misresolved.join('\n')}`,
    );
  }
  database = await createTestDatabase();
  busPrefix = `b${randomBytes(5).toString('hex')}`;
  // Drawn one after another through one set: each draw only checks that nothing listens yet, so
  // draws side by side could hand two apps the same port.
  const taken = new Set<number>();
  const ports = {} as Record<AppName, number>;
  for (const app of APPS) ports[app] = await freePort(taken);
  // The gateway's admin port set like the others: its default, PORT + 600, is a port nobody checked.
  const adminPort = await freePort(taken);
  env = {
    NODE_ENV: 'development',
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    ...Object.fromEntries(APPS.map((app) => [PORT_VARIABLES[app], String(ports[app])])),
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.gateway}`,
    PROVIDER_BASE_URL: `http://127.0.0.1:${ports['bank-sandbox']}`,
    BANK_SANDBOX_PUBLIC_URL: `http://127.0.0.1:${ports['bank-sandbox']}`,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${ports['receivables-svc']}/provider/webhooks/bank-sandbox`,
    ADMIN_PORT: String(adminPort),
    // The console's /readyz asks both of the gateway's ports.
    GATEWAY_URL: `http://127.0.0.1:${ports.gateway}`,
    GATEWAY_ADMIN_URL: `http://127.0.0.1:${adminPort}`,
  };
  receiver = await new CallbackReceiver().start();
  // The built migration step first, as the image's `npm run migrate` runs it; each app then logs in
  // as its own role.
  await promisify(execFile)(process.execPath, [join(__dirname, '..', '..', 'dist', 'scripts', 'migrate.js')], {
    cwd: tmpdir(),
    env: builtAppEnv(env),
  });
  for (const app of APPS) {
    apps.push(new BuiltApp(app, ports[app], { ...env, DATABASE_URL: appDatabaseUrl(app, database.url) }).start());
  }
  gateway = apps.find((a) => a.app === 'gateway')!;
  await Promise.all(apps.map((a) => a.waitReady(60_000)));
}, 90_000);

afterAll(async () => {
  // Every step runs even when one before it (or the test) failed, so no process outlives the run.
  await Promise.allSettled(apps.map((a) => a.stop()));
  await receiver?.stop().catch(() => undefined);
  if (busPrefix) await deleteBusStreams(busPrefix).catch(() => undefined);
  await database?.drop().catch(() => undefined);
}, 60_000);

it('starts every app from dist/ with plain node (no tsx), each answering /readyz 200', async () => {
  for (const a of apps) {
    expect(a.args).toEqual([process.execPath, builtFile(a.app)]);
    const res = await fetch(`${a.url}/readyz`);
    expect({ app: a.app, status: res.status }).toEqual({ app: a.app, status: 200 });
  }
  // Files the gateway reads from node_modules at run time (swagger-ui-dist) and the OpenAPI document.
  expect((await fetch(`${gateway.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
  expect((await fetch(`${gateway.url}/api/v1/openapi.json`)).status).toBe(200);
});

it('builds a booklet PDF: tenant from the built admin CLI, client, installments registered, booklet callback, PDF download', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [builtFile('gateway', 'transport/cli/cli.js'), 'tenant', 'create', '--name', 'Built ERP', '--json'],
    {
      cwd: tmpdir(),
      env: builtAppEnv(env),
    },
  );
  const tenant = JSON.parse(stdout) as { tenant_id: string; integration_token: string };
  const auth = await new ApiClient(gateway.url).post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);
  const api = new ApiClient(gateway.url, auth.json.access_token);

  const client = clientPayload({ name: 'Ana Compradora' });
  expect((await api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);

  const slip = randomUUID();
  const items = [0, 1, 2].map((i) =>
    receivablePayload(client.client_id, receiver!.url, {
      payment_slip_id: slip,
      due_date: `2027-0${i + 1}-10`,
      value: 120 + i,
    }),
  );
  expect((await api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  const ids = new Set(items.map((i) => i.account_receivable_id));
  await waitFor(
    () =>
      receivedCallbacks(receiver!)
        .filter(isReceivableCallback)
        .filter((c) => ids.has(c.accounts_receivable_id)).length === 3,
    30_000,
    'the registered callbacks',
  );

  const requested = await api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
    url_callback: receiver!.url,
  });
  // Status and body together: a refusal's problem detail shows in the failure.
  expect({ status: requested.status, body: requested.json }).toMatchObject({
    status: 202,
    body: { success: true, type: 'preparing', payment_slip_id: slip },
  });
  await waitFor(() => bookletSent(receiver!, slip) !== undefined, 30_000, 'the booklet callback');
  const sent = bookletSent(receiver!, slip)!;
  expect(sent.download).toContain(`${gateway.url}/api/v1/bank-slip-booklet/downloads/`);

  const pdf = await download(sent.download);
  expect(pdf).toMatchObject({ status: 200, magic: '%PDF-' });
  expect(pdf.headers.get('content-type')).toContain('application/pdf');
  const { bytes } = pdf;
  // pdfkit writes page objects uncompressed: a cover, then 3 installments per page.
  const pages = bytes.toString('latin1').match(/\/Type\s*\/Page(?!s)/g) ?? [];
  expect(pages).toHaveLength(2);
}, 120_000);
