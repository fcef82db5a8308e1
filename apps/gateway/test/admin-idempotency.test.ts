import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createOperator } from '../src/domain/tenancy/operators';
import type { GatewayDatabase } from '../src/db/schema';
import type { RunningGateway } from '../src/server';
import { CALLED_FROM_CODE } from '../src/domain/tenancy/admin-audit';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';

/*
 * The Idempotency-Key of the admin calls that answer a secret, against the real gateway and Postgres:
 * a repeat answers the same secret and acts once (one rotation, one audit row), another body under the
 * key is 422, a concurrent repeat 409, the stored answer is sealed, and a rotation during a running
 * overlap needs confirm_overlap.
 */

let running: GatewayUnderTest;
let gateway: RunningGateway;
let db: Kysely<GatewayDatabase>;
let credential: string;

beforeAll(async () => {
  running = await startGatewayUnderTest();
  ({ gateway, db } = running);
  credential = (await createOperator(db, 'Idem Ops', CALLED_FROM_CODE)).credential;
});

afterAll(async () => {
  await running?.stop();
});

interface Answer {
  status: number;
  replayed: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions read any field
  json: any;
}

async function post(path: string, key: string | undefined, body?: unknown, auth = credential): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${auth}` };
  if (key !== undefined) headers['idempotency-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${gateway.adminUrl}${path}`, {
    method: 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed') === 'true',
    json: await res.json(),
  };
}

async function audited(action: string, tenantId: string): Promise<number> {
  const rows = await db
    .selectFrom('admin_audit')
    .select('id')
    .where('action', '=', action as never)
    .where('tenant_id', '=', tenantId)
    .execute();
  return rows.length;
}

async function newTenant(): Promise<string> {
  const created = await post('/admin/v1/tenants', randomUUID(), { name: `Idem ${randomUUID()}` });
  expect(created.status).toBe(201);
  return created.json.tenant_id as string;
}

it('creates a tenant once per key: the repeat answers the same token and secret, one tenant, one audit row', async () => {
  const key = randomUUID();
  const name = `Acme ${randomUUID()}`;
  const first = await post('/admin/v1/tenants', key, { name });
  const again = await post('/admin/v1/tenants', key, { name });
  expect(first.status).toBe(201);
  expect(first.replayed).toBe(false);
  expect(again).toEqual({ status: 201, replayed: true, json: first.json });
  const tenants = await db.selectFrom('tenants').select('id').where('name', '=', name).execute();
  expect(tenants).toEqual([{ id: first.json.tenant_id }]);
  expect(await audited('tenant.create', first.json.tenant_id)).toBe(1);
  // Kept sealed: neither secret is readable in the stored row.
  const rows = await db.selectFrom('idempotency_keys').select('response_body').where('key', '=', key).execute();
  expect(rows).toHaveLength(1);
  expect(rows[0]!.response_body).toMatch(/^v2\./);
  expect(rows[0]!.response_body).not.toContain(first.json.signing_secret);
  expect(rows[0]!.response_body).not.toContain(first.json.integration_token);
});

it('rotates once per key: the repeat answers the same secret, one rotation in the database, one audit row', async () => {
  const tenantId = await newTenant();
  const key = randomUUID();
  const path = `/admin/v1/tenants/${tenantId}/signing-secret/rotate`;
  const first = await post(path, key, { overlap_hours: 1 });
  expect(first.status).toBe(200);
  const before = await db
    .selectFrom('tenants')
    .select(['sealed_signing_secret', 'signing_secret_rotated_at'])
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  const again = await post(path, key, { overlap_hours: 1 });
  expect(again).toEqual({ status: 200, replayed: true, json: first.json });
  const after = await db
    .selectFrom('tenants')
    .select(['sealed_signing_secret', 'signing_secret_rotated_at'])
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  expect(after).toEqual(before);
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(1);

  // The same key with another body: refused, nothing rotated.
  const other = await post(path, key, { overlap_hours: 2 });
  expect(other.status).toBe(422);
  expect(other.json.code).toBe('idempotency_key_reused');
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(1);
});

it('issues a token once per key, and keys belong to their route and operator', async () => {
  const tenantId = await newTenant();
  const key = randomUUID();
  const path = `/admin/v1/tenants/${tenantId}/tokens`;
  const first = await post(path, key);
  const again = await post(path, key);
  expect(first.status).toBe(201);
  expect(again).toEqual({ status: 201, replayed: true, json: first.json });
  expect(await audited('token.create', tenantId)).toBe(1);

  // Another operator's same key is its own: a second token.
  const other = (await createOperator(db, `Other ${randomUUID()}`, CALLED_FROM_CODE)).credential;
  const theirs = await post(path, key, undefined, other);
  expect(theirs.status).toBe(201);
  expect(theirs.json.token_id).not.toBe(first.json.token_id);
  // The same key on another tenant's route is another request too.
  const elsewhere = await post(`/admin/v1/tenants/${await newTenant()}/tokens`, key);
  expect(elsewhere.status).toBe(201);
  expect(elsewhere.replayed).toBe(false);
  expect(await audited('token.create', tenantId)).toBe(2);
});

it('answers a concurrent repeat 409 while the first runs, and still rotates once', async () => {
  const tenantId = await newTenant();
  const key = randomUUID();
  const path = `/admin/v1/tenants/${tenantId}/signing-secret/rotate`;
  // A rotation answers after ~1 s (callback-svc's reuse of a secret), so the second arrives meanwhile.
  const [a, b] = await Promise.all([
    post(path, key, { overlap_hours: 0 }),
    new Promise((r) => setTimeout(r, 200)).then(() => post(path, key, { overlap_hours: 0 })),
  ]);
  expect(a.status).toBe(200);
  expect(b.status).toBe(409);
  expect(b.json.code).toBe('idempotency_request_in_progress');
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(1);
  expect(await post(path, key, { overlap_hours: 0 })).toEqual({ status: 200, replayed: true, json: a.json });
});

it('refuses a rotation during a running overlap unless confirmed, naming its end; the tenant list shows it', async () => {
  const tenantId = await newTenant();
  const path = `/admin/v1/tenants/${tenantId}/signing-secret/rotate`;
  const first = await post(path, randomUUID(), { overlap_hours: 1 });
  expect(first.status).toBe(200);
  const until = first.json.previous_valid_until as string;
  expect(Date.parse(until)).toBeGreaterThan(Date.now() + 50 * 60_000);

  const listed = await fetch(`${gateway.adminUrl}/admin/v1/tenants`, {
    headers: { authorization: `Bearer ${credential}` },
  }).then((r) => r.json() as Promise<{ items: Array<{ tenant_id: string; previous_secret_valid_until: unknown }> }>);
  expect(listed.items.find((t) => t.tenant_id === tenantId)?.previous_secret_valid_until).toBe(until);

  const key = randomUUID();
  const refused = await post(path, key, { overlap_hours: 1 });
  expect(refused.status).toBe(409);
  expect(refused.json.code).toBe('rotation_overlap_running');
  expect(refused.json.detail).toContain(until);
  expect(refused.json.errors).toEqual([
    { path: '/confirm_overlap', message: `must be true to rotate before ${until}` },
  ]);
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(1);

  // A refusal is not kept under its key: the confirmed request may reuse it.
  const confirmed = await post(path, key, { overlap_hours: 1, confirm_overlap: true });
  expect(confirmed.status).toBe(200);
  expect(confirmed.json.signing_secret).not.toBe(first.json.signing_secret);
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(2);

  // Without a key (the CLI's way of calling), each call acts.
  const keyless = await post(path, undefined, { overlap_hours: 0, confirm_overlap: true });
  expect(keyless.status).toBe(200);
  expect(await audited('tenant.rotate-secret', tenantId)).toBe(3);
  // An overlap of 0 leaves none running: the next rotation needs no confirmation.
  expect((await post(path, undefined, { overlap_hours: 0 })).status).toBe(200);
});

it('refuses a malformed key naming the header, doing nothing', async () => {
  const tenantId = await newTenant();
  const bad = await post(`/admin/v1/tenants/${tenantId}/tokens`, 'two words');
  expect(bad.status).toBe(400);
  expect(bad.json.code).toBe('idempotency_key_invalid');
  expect(bad.json.errors).toEqual([{ in: 'header', path: 'Idempotency-Key', message: 'is invalid' }]);
  expect(await audited('token.create', tenantId)).toBe(0);
});
