// Expand then contract (docs/architecture.md): the previous release keeps working on a database
// migrated by this one, since during a rollout both run at once. Its sources come from git at its
// tag, its apps run as it released them (its own npm start, its own migrate step first, then each app
// as its schema's role), on a database today's `npm run migrate` made.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type {
  AuthenticateResponse,
  CancelResponse,
  ConsultResult,
  ReceivablesCreateResponse,
  SearchResultItem,
} from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { removeBus } from '@payments/test-support/bus-provision';
import { download } from '../support/download';
import { ApiClient } from '../support/api-client';
import { bookletSent } from '../support/booklet-callbacks';
import { queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import {
  migrateWithTodaysCode,
  previousReleaseTree,
  startRelease,
  type ReleaseTree,
  type RunningRelease,
} from '../support/previous-release';
import {
  asRegistered,
  isCancellationResult,
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { interAccountFlags, InterBankControls, writeIntegrationFiles } from '../support/inter-bank';

const SCHEMAS = ['gateway', 'clients', 'receivables', 'booklets', 'callbacks', 'bank_sandbox'];
const FAST = { CALLBACK_RETRY_SCHEDULE_MS: '200,400,800', CALLBACK_POLL_INTERVAL_MS: '50' };
/** Emission date of this file's charges: the search finds exactly them. */
const EMITTED = '2026-08-07';

let tree: ReleaseTree;
let database: { url: string; drop: () => Promise<void> };
let release: RunningRelease | undefined;
let receiver: CallbackReceiver;
let api: ApiClient;
let signingSecret: string;
let tenantId: string;
/** The migrations applied per schema once today's code migrated the database. */
let migratedToday: Record<string, string[]>;
const busPrefix = `t${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  const t0 = Date.now();
  tree = await previousReleaseTree();
  const t1 = Date.now();
  database = await createTestDatabase();
  const migrated = await migrateWithTodaysCode(database.url);
  migratedToday = await appliedBySchema(database.url);
  const t2 = Date.now();
  receiver = await new CallbackReceiver().start();
  release = await startRelease(tree, { databaseUrl: database.url, busPrefix, env: FAST });
  const t3 = Date.now();
  const tenant = await release.admin<{ tenant_id: string; integration_token: string; signing_secret: string }>([
    'tenant',
    'create',
    '--name',
    'Previous release',
  ]);
  signingSecret = tenant.signing_secret;
  tenantId = tenant.tenant_id;
  const auth = await new ApiClient(release.gatewayUrl).post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);
  api = new ApiClient(release.gatewayUrl, auth.json.access_token);
  console.log(
    `previous release ${tree.tag} (${tree.commit.slice(0, 12)}): tree ${tree.preparedInMs ? `prepared in ${tree.preparedInMs} ms (npm ci ${tree.installMs} ms)` : 'cached'} [${t1 - t0} ms]; ` +
      `today's migrate ${migrated.ms} ms; its npm start ready in ${t3 - t2} ms; ` +
      `schemas it found ahead: ${JSON.stringify(reportedAhead(release.output()))}`,
  );
}, 900_000);

afterAll(async () => {
  await release?.stop();
  await receiver?.stop();
  await removeBus(busPrefix).catch(() => undefined);
  await database?.drop().catch(() => undefined);
}, 60_000);

it("runs on today's schema as it is: its migrator applies nothing of its own", async () => {
  // Each of its apps migrates at start: on a schema today's code migrated, either it knows every
  // migration there, or it finds the schema ahead of it and runs on it unchanged. Either way the
  // applied migrations are today's, and those it reported as ahead are among them.
  expect(await appliedBySchema(database.url)).toEqual(migratedToday);
  for (const [schema, names] of Object.entries(reportedAhead(release?.output() ?? ''))) {
    expect(migratedToday[schema]).toEqual(expect.arrayContaining(names));
  }
});

it('registers charges, calls back signed, consults, searches, pays and cancels through its gateway', async () => {
  const client = clientPayload();
  expect((await api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const batch = [
    receivablePayload(client.client_id, receiver.url, { payment_method: 1, emission_date: EMITTED, value: 101.5 }),
    receivablePayload(client.client_id, receiver.url, { payment_method: 3, emission_date: EMITTED, value: 202 }),
    receivablePayload(client.client_id, receiver.url, { payment_method: 1, emission_date: EMITTED, value: 303 }),
  ];
  const created = await api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', batch);
  expect(created.status).toBe(202);
  const ids = batch.map((b) => b.account_receivable_id);
  const callbacksFor = (id: string) => receivableCallbacks(receiver, id);
  await waitFor(
    () => ids.every((id) => callbacksFor(id).some(isRegistered)),
    60_000,
    'a registered callback for each charge',
  );
  for (const record of receiver.received) {
    expect(new Webhook(signingSecret).verify(record.body, record.headers)).toBeTruthy();
  }

  const consulted = await api.post<ConsultResult>(`/api/v1/accounts-receivable/${ids[0]}/consult-transaction`);
  expect(consulted.status).toBe(200);
  expect(consulted.json).toMatchObject({
    accounts_receivable_id: ids[0],
    status_payment: 'Pendente',
    amount_due: 101.5,
  });

  const search = await api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
    state: 'all',
    start_date: EMITTED,
    end_date: EMITTED,
  });
  expect(search.status).toBe(200);
  expect(search.json.map((r) => r.accounts_receivable_id).sort()).toEqual([...ids].sort());

  const ourNumber = asRegistered(callbacksFor(ids[1]).find(isRegistered)).payment_data.our_number;
  expect((await payAtSandbox(release?.sandboxUrl ?? '', ourNumber, 'pix')).status).toBe(200);
  await waitFor(() => callbacksFor(ids[1]).some(isPaid), 30_000, 'paid callback');

  const cancel = await api.postIdempotent<CancelResponse>(`/api/v1/accounts-receivable/${ids[2]}/cancel`, undefined);
  expect(cancel.status).toBe(202);
  await waitFor(() => callbacksFor(ids[2]).some(isCancellationResult), 30_000, 'cancellation callback');
  expect(callbacksFor(ids[2]).find(isCancellationResult)).toMatchObject({ status: 'success' });

  const states = await Promise.all(
    ids.map(async (id) => {
      const res = await api.post<ConsultResult>(`/api/v1/accounts-receivable/${id}/consult-transaction`);
      return res.json.status_payment;
    }),
  );
  expect(states).toEqual(['Pendente', 'Aprovada', 'Cancelada']);
  for (const record of receiver.received) {
    expect(new Webhook(signingSecret).verify(record.body, record.headers)).toBeTruthy();
  }
});

it("stores and applies an Inter bank's payment notice in today's notice queue, logged once", async () => {
  // The previous release stores a notice into bank_notices with `on conflict` and marks it applied
  // there; today's schema keeps that table as the queue and logs every notice by month.
  const bank = new InterBankControls(release?.sandboxUrl ?? '');
  const integration = await bank.newIntegration();
  const dir = mkdtempSync(join(tmpdir(), 'previous-inter-'));
  try {
    // Its CLI reads no secret from stdin: the secret goes in a file too.
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, integration.client_secret, { mode: 0o600 });
    const files = writeIntegrationFiles(dir, integration);
    await release?.admin(['tenant', 'account', ...interAccountFlags(tenantId, integration, files, secretFile)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const client = clientPayload();
  expect((await api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const charge = receivablePayload(client.client_id, receiver.url, { payment_method: 1, value: 404.04 });
  const id = charge.account_receivable_id;
  expect((await api.postIdempotent('/api/v1/accounts-receivable', [charge])).status).toBe(202);
  await waitFor(() => receivableCallbacks(receiver, id).some(isRegistered), 60_000, 'a registered callback');
  const [atBank] = await bank.charges(integration.client_id);
  expect(atBank).toBeDefined();
  await bank.pay(atBank?.cobranca.codigoSolicitacao ?? '', 'boleto');
  await waitFor(() => receivableCallbacks(receiver, id).some(isPaid), 60_000, 'paid callback');

  const chargeId = atBank?.cobranca.codigoSolicitacao ?? '';
  const logged = await queryRows<{ kind: string; outcome: string | null; applied: boolean }>(
    database.url,
    `select kind, outcome, applied_at is not null as applied from receivables.bank_notice_log
     where charge_id = $1 and kind = 'paid'`,
    [chargeId],
  );
  expect(logged).toEqual([{ kind: 'paid', outcome: 'approved', applied: true }]);
  const queued = await queryRows<{ n: string }>(
    database.url,
    'select count(*) as n from receivables.bank_notices where charge_id = $1 and applied_at is not null',
    [chargeId],
  );
  expect(Number(queued[0]?.n)).toBe(0);
});

it("builds a booklet and serves its PDF on today's schema, where booklet_files is gone", async () => {
  const gone = await queryRows<{ found: boolean }>(
    database.url,
    "select to_regclass('booklets.booklet_files') is not null as found",
  );
  expect(gone).toEqual([{ found: false }]);
  const client = clientPayload();
  expect((await api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const slip = randomUUID();
  const installments = ['2027-05-10', '2027-06-10'].map((due_date, i) =>
    receivablePayload(client.client_id, receiver.url, { payment_slip_id: slip, due_date, value: 150 + i }),
  );
  expect((await api.postIdempotent('/api/v1/accounts-receivable', installments)).status).toBe(202);
  await waitFor(
    () => installments.every((c) => receivableCallbacks(receiver, c.account_receivable_id).some(isRegistered)),
    60_000,
    'a registered callback for each installment',
  );
  const requested = await api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url });
  expect(requested.status).toBe(202);
  await waitFor(() => bookletSent(receiver, slip) !== undefined, 60_000, 'the booklet sent callback');
  const sent = bookletSent(receiver, slip);
  expect(sent).toMatchObject({ success: true, type: 'sent', payment_slip_id: slip, installments: 2 });
  const pdf = await download(sent?.download ?? '');
  expect(pdf).toMatchObject({ status: 200, magic: '%PDF-' });
  expect(pdf.headers.get('content-type')).toContain('application/pdf');
});

async function appliedBySchema(url: string): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {};
  for (const schema of SCHEMAS) {
    const rows = await queryRows<{ name: string }>(url, `select name from "${schema}".kysely_migration order by name`);
    result[schema] = rows.map((r) => r.name);
  }
  return result;
}

/** What the previous release's apps logged as "migrated by a newer version", per schema. */
function reportedAhead(output: string): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const line of output.split('\n')) {
    if (!line.includes('migrated by a newer version')) continue;
    try {
      const entry = JSON.parse(line) as { schema?: string; aheadBy?: string[] };
      if (entry.schema) result[entry.schema] = entry.aheadBy ?? [];
    } catch {
      // not a JSON log line
    }
  }
  return result;
}
