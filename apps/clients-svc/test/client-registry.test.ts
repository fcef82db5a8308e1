import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { ClientsDatabase } from '../src/db/schema';
import { findClients, registerClients, updateClient } from '../src/domain/client-registry';
import type { NewClient } from '../src/domain/client';

let db: Kysely<ClientsDatabase>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  db = createDatabase<ClientsDatabase>({ url: test.url, schema: SCHEMA });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

function newClient(overrides: Partial<NewClient> = {}): NewClient {
  return {
    clientId: randomUUID(),
    name: 'Ana',
    taxId: '529.982.247-25',
    address: null,
    number: null,
    neighborhood: null,
    city: null,
    state: 'RJ',
    zipCode: null,
    complement: null,
    telephone: null,
    phoneNumber: null,
    email: null,
    ...overrides,
  };
}

it('migrations are idempotent: running them again changes nothing', async () => {
  await expect(migrateToLatest(db, SCHEMA, migrations)).resolves.toEqual({ aheadBy: [] });
});

it('keeps the tax id as written and indexes its bare form', async () => {
  const tenant = randomUUID();
  const c = newClient({ taxId: '12.abc.345/01de-35' });
  await registerClients(db, tenant, [c]);
  const row = await db.selectFrom('clients').selectAll().where('tenant_id', '=', tenant).executeTakeFirstOrThrow();
  expect(row.tax_id).toBe('12.abc.345/01de-35');
  expect(row.tax_id_normalized).toBe('12ABC34501DE35');
});

it('registers each client once when the same batch races with itself', async () => {
  const tenant = randomUUID();
  const batch = Array.from({ length: 50 }, () => newClient());
  const results = await Promise.all(Array.from({ length: 4 }, () => registerClients(db, tenant, batch)));
  const createdIds = results.flatMap((r) => r.created.map((c) => c.clientId));
  expect(createdIds.sort()).toEqual(batch.map((c) => c.clientId).sort());
  for (const r of results) expect(r.created.length + r.alreadyRegistered.length).toBe(50);
  const { count } = await db
    .selectFrom('clients')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenant)
    .executeTakeFirstOrThrow();
  expect(Number(count)).toBe(50);
});

it('updates only within the tenant and bumps the version', async () => {
  const owner = randomUUID();
  const other = randomUUID();
  const c = newClient();
  await registerClients(db, owner, [c]);
  await expect(updateClient(db, other, c.clientId, { ...c, name: 'Intruder' })).rejects.toMatchObject({
    code: 'not_found',
  });
  await expect(updateClient(db, other, c.clientId, c)).rejects.toBeInstanceOf(ServiceError);
  const updated = await updateClient(db, owner, c.clientId, { ...c, name: 'Ana Paula', email: 'ana@example.com' });
  expect(updated).toMatchObject({ tenantId: owner, clientId: c.clientId, name: 'Ana Paula', email: 'ana@example.com' });
  const row = await db
    .selectFrom('clients')
    .select(['version', 'name'])
    .where('tenant_id', '=', owner)
    .where('client_id', '=', c.clientId)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ version: 2, name: 'Ana Paula' });
});

describe('ERP ids are kept as sent', () => {
  it('returns the creation spelling; another spelling is the same client', async () => {
    const tenant = randomUUID();
    const sent = randomUUID()
      .toUpperCase()
      .replace(/^(.{4})/, (p) => p.toLowerCase());
    const first = await registerClients(db, tenant, [newClient({ clientId: sent })]);
    expect(first.created.map((c) => c.clientId)).toEqual([sent]);

    const again = await registerClients(db, tenant, [newClient({ clientId: sent.toLowerCase() })]);
    expect(again).toEqual({ created: [], alreadyRegistered: [sent] });
    const updated = await updateClient(db, tenant, sent.toLowerCase(), { ...newClient(), name: 'Ana Maria' });
    expect(updated).toMatchObject({ clientId: sent, name: 'Ana Maria' });
    expect((await findClients(db, tenant, [sent.toLowerCase()])).map((c) => c.clientId)).toEqual([sent]);
    const { count } = await db
      .selectFrom('clients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenant_id', '=', tenant)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(1);
  });

  it('a repeat within one batch in another case is already registered, spelled as the first', async () => {
    const tenant = randomUUID();
    const id = randomUUID();
    const result = await registerClients(db, tenant, [
      newClient({ clientId: id.toUpperCase() }),
      newClient({ clientId: id }),
    ]);
    expect(result.created.map((c) => c.clientId)).toEqual([id.toUpperCase()]);
    expect(result.alreadyRegistered).toEqual([id.toUpperCase()]);
  });

  it('the upgrade gives clients stored before it their stored spelling', async () => {
    const test = await createTestDatabase();
    const old = createDatabase<ClientsDatabase>({ url: test.url, schema: SCHEMA });
    try {
      await migrateToLatest(old, SCHEMA, { '0001_clients': migrations['0001_clients']! });
      const tenant = randomUUID();
      const id = randomUUID();
      await sql`insert into clients (tenant_id, client_id, name, tax_id, tax_id_normalized)
        values (${tenant}, ${id.toUpperCase()}, 'Ana', '52998224725', '52998224725')`.execute(old);
      await migrateToLatest(old, SCHEMA, migrations);
      const again = await registerClients(old, tenant, [newClient({ clientId: id.toUpperCase() })]);
      expect(again).toEqual({ created: [], alreadyRegistered: [id] });
    } finally {
      await old.destroy();
      await test.drop();
    }
  });
});
