import type { Bus } from '@payments/bus';
import {
  ClientsCreateRequestSchema,
  ClientUpdateRequestSchema,
  compileValidator,
  Subjects,
  type ClientsCreateRequest,
  type ClientUpdateRequest,
} from '@payments/contracts';
import { assertBatchSize, uuidParam, endpoint, type Endpoint, type MountableEndpoint } from '../endpoint';
import { requestBody } from '../json-body';
import { validationError } from '../problem';

const validateCreate = compileValidator(ClientsCreateRequestSchema);
const validateUpdate = compileValidator(ClientUpdateRequestSchema);

export function clientEndpoints(bus: Bus): MountableEndpoint[] {
  const create: Endpoint<ClientsCreateRequest> = {
    operation: 'createClients',
    parse(ctx) {
      const body = requestBody(ctx);
      assertBatchSize(body);
      const result = validateCreate(body);
      if (!result.ok) throw validationError(result.errors);
      return result.value;
    },
    async handle(clients, ctx, tenant) {
      const reply = await bus.request(Subjects.clients.create, {
        tenant_id: tenant.tenantId,
        clients,
      });
      return { status: 201, body: reply };
    },
  };

  const update: Endpoint<{ clientId: string; client: ClientUpdateRequest }> = {
    operation: 'updateClient',
    parse(ctx) {
      const clientId = uuidParam(ctx, 'uuid');
      const result = validateUpdate(requestBody(ctx));
      if (!result.ok) throw validationError(result.errors);
      return { clientId, client: result.value };
    },
    async handle({ clientId, client }, ctx, tenant) {
      const reply = await bus.request(Subjects.clients.update, {
        tenant_id: tenant.tenantId,
        client_id: clientId,
        client,
      });
      return { status: 200, body: reply };
    },
  };

  return [endpoint(create), endpoint(update)];
}
