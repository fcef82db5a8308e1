import type { Kysely } from 'kysely';
import type { RegisterHandlers } from '@payments/bus';
import {
  QueueGroups,
  Subjects,
  type ClientsCreateCommand,
  type ClientsCreateResponse,
  type ClientUpdateCommand,
  type ClientUpdateResponse,
  type CreatedClient,
} from '@payments/contracts';
import type { ClientsDatabase } from '../db/schema';
import { findClients, registerClients, updateClient } from '../domain/client-registry';
import { detailsFromWire, newClientFromWire, toClientData } from './wire';

export interface HandlerDeps {
  db: Kysely<ClientsDatabase>;
}

/** Bus handlers: commands in, spec-shaped replies out. The gateway has validated every command. */
export const registerHandlers: RegisterHandlers<HandlerDeps> = (bus, { db }) => [
  bus.serve(Subjects.clients.create, (cmd) => createClients(db, cmd), { queue: QueueGroups.clients }),
  bus.serve(Subjects.clients.update, (cmd) => updateOne(db, cmd), { queue: QueueGroups.clients }),
  bus.serve(
    Subjects.clients.lookup,
    async (cmd) => {
      const clients = await findClients(db, cmd.tenant_id, cmd.client_ids);
      return {
        clients: clients.map((c) => ({
          client_id: c.clientId,
          name: c.name,
          cnpj_cpf: c.taxId,
          address: c.address,
          number: c.number,
          neighborhood: c.neighborhood,
          city: c.city,
          state: c.state,
          zip_code: c.zipCode,
          email: c.email,
        })),
      };
    },
    { queue: QueueGroups.clients },
  ),
];

async function createClients(db: Kysely<ClientsDatabase>, cmd: ClientsCreateCommand): Promise<ClientsCreateResponse> {
  const result = await registerClients(db, cmd.tenant_id, cmd.clients.map(newClientFromWire));
  // By key (any spelling of an id is the same client); the first mention of an id is the one created.
  const wantsData = new Map<string, boolean>();
  for (const c of cmd.clients) {
    const key = c.client_id.toLowerCase();
    if (!wantsData.has(key)) wantsData.set(key, c.return_client_data === true);
  }
  const created: CreatedClient[] = result.created.map((c) =>
    wantsData.get(c.clientId.toLowerCase())
      ? { client_id: c.clientId, data: toClientData(c) }
      : { client_id: c.clientId },
  );
  return {
    status: 'success',
    message: `${created.length} client(s) created, ${result.alreadyRegistered.length} already registered`,
    total_created_clients: created,
    clients_already_registered: result.alreadyRegistered.map((id) => ({ client_id: id })),
  };
}

async function updateOne(db: Kysely<ClientsDatabase>, cmd: ClientUpdateCommand): Promise<ClientUpdateResponse> {
  const client = await updateClient(db, cmd.tenant_id, cmd.client_id, detailsFromWire(cmd.client));
  return { status: 'success', message: 'client updated', data: toClientData(client) };
}
