import type { Bus } from '@payments/bus';
import { Subjects } from '@payments/contracts';
import type { ClientDirectory, Payer } from '../domain/ports';

/**
 * Clients are asked of clients-svc over NATS at intake (request-reply), not kept in a local read model:
 * a client registered a moment ago is found at once, and the payer is copied onto each charge anyway.
 */
export class BusClientDirectory implements ClientDirectory {
  constructor(private readonly bus: Bus) {}

  async find(tenantId: string, clientIds: string[]): Promise<Map<string, Payer>> {
    const reply = await this.bus.request(
      Subjects.clients.lookup,
      { tenant_id: tenantId, client_ids: [...new Set(clientIds)] },
      { service: 'clients' },
    );
    // Keyed in lower case: clients-svc answers with each id spelled as at its creation.
    return new Map(
      reply.clients.map((c) => [
        c.client_id.toLowerCase(),
        {
          clientId: c.client_id,
          name: c.name,
          taxId: c.cnpj_cpf,
          address: c.address,
          number: c.number,
          neighborhood: c.neighborhood,
          city: c.city,
          state: c.state,
          zipCode: c.zip_code,
          email: c.email,
        },
      ]),
    );
  }
}
