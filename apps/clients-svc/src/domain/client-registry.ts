import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { taxIdDigits } from '@payments/tax-id';
import type { ClientRow, ClientsDatabase, ClientsTable } from '../db/schema';
import type { Client, ClientBatchResult, ClientDetails, NewClient } from './client';

/**
 * Registers a batch of clients in one statement: each new client_id is inserted, an existing one is
 * left as it is (docs/api.md, Clients: "an already registered client is not changed"). Safe under concurrency:
 * ON CONFLICT DO NOTHING makes a racing duplicate land in alreadyRegistered. Ids match in any letter
 * case (the key is a uuid); every id comes back spelled as it was when its client was created.
 */
export async function registerClients(
  db: Kysely<ClientsDatabase>,
  tenantId: string,
  clients: NewClient[],
): Promise<ClientBatchResult> {
  const rows = clients.map((c) => ({
    tenant_id: tenantId,
    client_id: c.clientId,
    client_id_as_sent: c.clientId,
    ...toColumns(c),
  }));
  const inserted = await db
    .insertInto('clients')
    .values(rows)
    .onConflict((oc) => oc.columns(['tenant_id', 'client_id']).doNothing())
    .returningAll()
    .execute();
  const insertedByKey = new Map(inserted.map((row) => [row.client_id, row]));
  const existing = await spellingsOf(
    db,
    tenantId,
    clients.map((c) => idKey(c.clientId)).filter((key) => !insertedByKey.has(key)),
  );
  const created: Client[] = [];
  const alreadyRegistered: string[] = [];
  const reported = new Set<string>();
  for (const c of clients) {
    const key = idKey(c.clientId);
    const row = insertedByKey.get(key);
    // A repeat of the same id later in the batch counts as already registered.
    if (row && !reported.has(key)) created.push(toClient(row));
    else alreadyRegistered.push(row?.client_id_as_sent ?? existing.get(key) ?? c.clientId);
    reported.add(key);
  }
  return { created, alreadyRegistered };
}

/** The key an id is stored under (Postgres prints a uuid in lower case). */
function idKey(clientId: string): string {
  return clientId.toLowerCase();
}

/** How each of these registered ids was spelled at creation, by key. */
async function spellingsOf(
  db: Kysely<ClientsDatabase>,
  tenantId: string,
  keys: string[],
): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('clients')
    .select(['client_id', 'client_id_as_sent'])
    .where('tenant_id', '=', tenantId)
    .where('client_id', 'in', [...new Set(keys)])
    .execute();
  return new Map(rows.map((r) => [r.client_id, r.client_id_as_sent]));
}

/** Replaces a client's details (PUT semantics: omitted optional fields become empty); any spelling of the id matches. */
export async function updateClient(
  db: Kysely<ClientsDatabase>,
  tenantId: string,
  clientId: string,
  details: ClientDetails,
): Promise<Client> {
  const row = await db
    .updateTable('clients')
    .set({ ...toColumns(details), updated_at: new Date(), version: (eb) => eb('version', '+', 1) })
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ServiceError('not_found', `client ${clientId} is not registered`);
  return toClient(row);
}

function toColumns(
  c: ClientDetails,
): Omit<ClientsTable, 'tenant_id' | 'client_id' | 'client_id_as_sent' | 'created_at' | 'updated_at' | 'version'> {
  return {
    name: c.name,
    tax_id: c.taxId,
    tax_id_normalized: taxIdDigits(c.taxId),
    address: c.address,
    number: c.number,
    neighborhood: c.neighborhood,
    city: c.city,
    state: c.state,
    zip_code: c.zipCode,
    complement: c.complement,
    telephone: c.telephone,
    phone_number: c.phoneNumber,
    email: c.email,
  };
}

function toClient(row: ClientRow): Client {
  return {
    tenantId: row.tenant_id,
    clientId: row.client_id_as_sent,
    name: row.name,
    taxId: row.tax_id,
    address: row.address,
    number: row.number,
    neighborhood: row.neighborhood,
    city: row.city,
    state: row.state,
    zipCode: row.zip_code,
    complement: row.complement,
    telephone: row.telephone,
    phoneNumber: row.phone_number,
    email: row.email,
  };
}

/** The tenant's clients among `clientIds`, in any spelling (missing ones are simply absent). */
export async function findClients(
  db: Kysely<ClientsDatabase>,
  tenantId: string,
  clientIds: string[],
): Promise<Client[]> {
  if (clientIds.length === 0) return [];
  const rows = await db
    .selectFrom('clients')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('client_id', 'in', [...new Set(clientIds.map(idKey))])
    .execute();
  return rows.map(toClient);
}
