import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Problem, ReceivableHistory, RegistrationHealth } from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { createTestCertificateAuthority } from '@payments/inter-cobranca/test-certificates';
import { setProviderAccount } from '../support/admin-cli';
import { queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { waitFor } from '../support/receiver';
import { freePort, startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * End to end through the gateway: for a tenant whose provider account is `inter`, a
 * batch holding a charge Inter will refuse is answered 422 naming `/<index>/<field>` in our field
 * names, and nothing of it is stored; a sandbox tenant's same batch is accepted. Then a charge stuck on
 * an unreachable bank is visible: its history, the operator's registration health and the metrics.
 *
 * The oracle is Inter's API reference (developers.inter.co/references/cobranca-bolepix), POST
 * /cobrancas, written out here: valorNominal minimum 2.5; Pagador requires endereco, cidade, uf and
 * cep (8 characters) beside nome and cpfCnpj, cidade at most 60 characters; "Cobranças com vencimento
 * para o mesmo dia só podem ser emitidas até às 19h59" (Brasília); no due date in the past.
 */

let system: TestSystem;
let operator: string;
let dir: string;
let inter: TestTenant;
let sandbox: TestTenant;
const callbackUrl = 'https://erp.example.com/callbacks';

/** Today's date and the time in Brasília (UTC-3 all year since 2019), as Inter's clock reads them. */
function brasilia(now = new Date()): { date: string; minutes: number } {
  const local = new Date(now.getTime() - 3 * 3_600_000);
  return { date: local.toISOString().slice(0, 10), minutes: local.getUTCHours() * 60 + local.getUTCMinutes() };
}
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  system = await startSystem({ withReceivables: true });
  dir = mkdtempSync(join(tmpdir(), 'inter-intake-'));
  const adminDb = await openAdminDatabase(system.databaseUrl);
  try {
    operator = (await createOperator(adminDb, 'Intake Ops', { operator: 'test' })).credential;
  } finally {
    await adminDb.destroy();
  }
  inter = await system.newTenant('Escola Inter');
  sandbox = await system.newTenant('Escola Sandbox');
  // Inter at an address nothing answers: every registration waits (the bank is unreachable).
  const ca = createTestCertificateAuthority('inter intake e2e CA');
  const cert = ca.issue({ commonName: 'intake-client', kind: 'client' });
  const files = { secret: join(dir, 'secret.txt'), cert: join(dir, 'client.crt'), key: join(dir, 'client.key') };
  writeFileSync(files.secret, `secret-${randomBytes(8).toString('hex')}\n`);
  writeFileSync(files.cert, cert.certPem);
  writeFileSync(files.key, cert.keyPem);
  const unreachable = `https://127.0.0.1:${await freePort()}/inter`;
  await setProviderAccount(system.databaseUrl, [
    ...['--tenant', inter.tenantId, '--provider', 'inter'],
    ...['--beneficiary-name', 'Escola Inter', '--beneficiary-tax-id', '45.723.174/0001-10'],
    ...['--client-id', 'intake-client', '--client-secret-file', files.secret],
    ...['--cert-file', files.cert, '--key-file', files.key, '--base-url', unreachable],
  ]);
}, 120_000);

afterAll(async () => {
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Registers a client (payer) for the tenant; returns its client_id. */
async function client(t: TestTenant, overrides: Record<string, unknown> = {}): Promise<string> {
  const payload = clientPayload(overrides);
  const res = await t.api.postIdempotent('/api/v1/clients', [payload]);
  expect(res.status).toBe(201);
  return payload.client_id;
}

async function searchAll(t: TestTenant, from: string, to: string): Promise<unknown[]> {
  const res = await t.api.post<unknown[]>('/api/v1/accounts-receivable/search', {
    state: 'all',
    start_date: from,
    end_date: to,
  });
  expect(res.status).toBe(200);
  return res.json;
}

it('an inter tenant: what Inter refuses is 422 naming /<index>/<field> in our names, nothing stored; a valid charge is accepted', async () => {
  const today = brasilia().date;
  const complete = await client(inter);
  // Only what our API requires (name, cnpj_cpf): no address, city, state or zip_code for Inter's Pagador.
  const bare = await client(inter, {
    address: null,
    number: null,
    neighborhood: null,
    city: null,
    state: null,
    zip_code: null,
    complement: null,
  });
  const longCity = await client(inter, { city: 'C'.repeat(61) });
  const emission = addDays(today, -3);
  const valid = receivablePayload(complete, callbackUrl, {
    emission_date: emission,
    due_date: addDays(today, 30),
    value: 2.5,
    items: [],
  });
  const batch = [
    valid,
    receivablePayload(bare, callbackUrl, { emission_date: emission, due_date: addDays(today, 30) }),
    receivablePayload(complete, callbackUrl, {
      emission_date: emission,
      due_date: addDays(today, 30),
      value: 2.49,
      items: [],
    }),
    receivablePayload(complete, callbackUrl, { emission_date: emission, due_date: addDays(today, -1) }),
    receivablePayload(longCity, callbackUrl, { emission_date: emission, due_date: addDays(today, 30) }),
  ];
  const refused = await inter.api.postIdempotent<Problem>('/api/v1/accounts-receivable', batch);
  expect(refused.status).toBe(422);
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const errors = refused.json.errors ?? [];
  expect(errors.map((e) => e.path)).toEqual(['/1/client_id', '/2/value', '/3/due_date', '/4/client_id']);
  const byPath = new Map(errors.map((e) => [e.path, e.message]));
  // Our client field names for Inter's endereco, cidade, uf and cep; never Inter's own.
  for (const field of ['address', 'city', 'state', 'zip_code']) expect(byPath.get('/1/client_id')).toContain(field);
  expect(byPath.get('/4/client_id')).toContain('city');
  for (const e of errors) expect(e.message).not.toMatch(/pagador|endereco|cidade|\bcep\b|\buf\b|valorNominal/i);

  // Nothing of the batch was stored: not even its valid charge.
  expect(await searchAll(inter, emission, today)).toEqual([]);
  const consulted = await inter.api.post(
    `/api/v1/accounts-receivable/${valid.account_receivable_id}/consult-transaction`,
  );
  expect(consulted.status).toBe(404);

  // The valid charge alone is accepted, and stored.
  const accepted = await inter.api.postIdempotent('/api/v1/accounts-receivable', [valid]);
  expect(accepted.status).toBe(202);
  expect(await searchAll(inter, emission, today)).toEqual([
    expect.objectContaining({ accounts_receivable_id: valid.account_receivable_id, status_payment: 'Pendente' }),
  ]);
});

it('an inter tenant: a charge due today is taken only until 19:59 Brasília time', async () => {
  const now = brasilia();
  // Too close to the limit to know which side of it the request lands on: nothing to learn this minute.
  if (Math.abs(now.minutes - (19 * 60 + 59)) <= 1) return;
  const complete = await client(inter);
  const sameDay = receivablePayload(complete, callbackUrl, { emission_date: now.date, due_date: now.date });
  const res = await inter.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [sameDay]);
  if (now.minutes < 19 * 60 + 59) expect(res.status).toBe(202);
  else {
    expect(res.status).toBe(422);
    expect(res.json.errors?.map((e) => e.path)).toEqual(['/0/due_date']);
  }
});

it('a sandbox tenant is unaffected: the same charges are accepted', async () => {
  const today = brasilia().date;
  const bare = await client(sandbox, { address: null, city: null, state: null, zip_code: null });
  const res = await sandbox.api.postIdempotent('/api/v1/accounts-receivable', [
    receivablePayload(bare, callbackUrl, { emission_date: addDays(today, -3), due_date: addDays(today, 30), value: 1 }),
  ]);
  expect(res.status).toBe(202);
});

it('a charge stuck on an unreachable bank: pending, its history says it waits, the operator sees it per bank account', async () => {
  const today = brasilia().date;
  const complete = await client(inter);
  const item = receivablePayload(complete, callbackUrl, {
    emission_date: today,
    due_date: addDays(today, 20),
    value: 77.7,
  });
  expect((await inter.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  const historyPath = `/api/v1/accounts-receivable/${item.account_receivable_id}/history`;
  let history: ReceivableHistory = { items: [] };
  await waitFor(
    async () => {
      await new Promise((r) => setTimeout(r, 250));
      history = (await inter.api.send<ReceivableHistory>('GET', historyPath)).json;
      return history.items.some((h) => h.reason.startsWith('registration waiting (attempt 1)'));
    },
    30_000,
    'a history entry for the first attempt the bank did not take',
  );
  const waiting = history.items.filter((h) => h.reason.startsWith('registration waiting'));
  // No state change: from pending to pending.
  for (const h of waiting) expect(h).toMatchObject({ from_state: 'pending', to_state: 'pending' });
  const consult = await inter.api.post<{ status_payment: string }>(
    `/api/v1/accounts-receivable/${item.account_receivable_id}/consult-transaction`,
  );
  expect(consult.json.status_payment).toBe('Pendente');

  // As if it had been accepted 10 minutes ago: now it is stuck.
  await queryRows(
    system.databaseUrl,
    `update receivables.receivables set created_at = now() - interval '10 minutes' where account_receivable_id = $1`,
    [item.account_receivable_id],
  );
  const health = await fetch(`${system.gateway.adminUrl}/admin/v1/registration-health`, {
    headers: { authorization: `Bearer ${operator}` },
  });
  expect(health.status).toBe(200);
  const body = (await health.json()) as RegistrationHealth;
  const account = body.accounts.find((a) => a.tenant_id === inter.tenantId);
  expect(account).toMatchObject({ tenant_name: 'Escola Inter', provider: 'inter', stuck: 1 });
  expect(account!.waiting).toBeGreaterThanOrEqual(2);
  expect(account!.oldest_age_seconds).toBeGreaterThanOrEqual(600);
  expect(account!.attempts).toBeGreaterThanOrEqual(1);
  expect(account!.last_error).toEqual(expect.any(String));
  expect(body.accounts.some((a) => a.tenant_id === sandbox.tenantId && a.stuck > 0)).toBe(false);

  // The metric, per provider kind (read again after its 5 s cache).
  const receivablesUrl = system.receivables?.url ?? '';
  await waitFor(
    async () => {
      await new Promise((r) => setTimeout(r, 500));
      const text = await (await fetch(`${receivablesUrl}/metrics`)).text();
      const stuck = /^receivables_registrations_stuck\{provider="inter"[^}]*\} (\d+)$/m.exec(text);
      const oldest = /^receivables_registration_oldest_wait_seconds\{provider="inter"[^}]*\} (\d+)$/m.exec(text);
      return Number(stuck?.[1]) === 1 && Number(oldest?.[1]) >= 600;
    },
    15_000,
    'receivables_registrations_stuck{provider="inter"} 1',
  );
});

it('the registration health is the operator’s alone', async () => {
  const res = await fetch(`${system.gateway.adminUrl}/admin/v1/registration-health`, {
    headers: { authorization: `Bearer ${inter.accessToken}` },
  });
  expect(res.status).toBe(401);
});
