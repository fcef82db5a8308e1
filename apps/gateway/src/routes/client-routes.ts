import type { Bus } from '@payments/bus';
import {
  ClientsCreateRequestSchema,
  ClientUpdateRequestSchema,
  compileValidator,
  Subjects,
  type ClientsCreateRequest,
  type ClientUpdateRequest,
} from '@payments/contracts';
import { assertBatchSize, uuidParam, type Endpoint } from '../http/endpoint';
import { requestBody } from '../http/json-body';
import { validationError } from '../http/problem';
import type { GatewayContext } from '../http/context';

const validateCreate = compileValidator(ClientsCreateRequestSchema);
const validateUpdate = compileValidator(ClientUpdateRequestSchema);

export function clientEndpoints(bus: Bus): Endpoint<unknown>[] {
  const create: Endpoint<ClientsCreateRequest> = {
    method: 'post',
    path: '/api/v1/clients',
    idempotency: 'required',
    parse(ctx) {
      const body = requestBody(ctx);
      assertBatchSize(body);
      const result = validateCreate(body);
      if (!result.ok) throw validationError(result.errors);
      return result.value;
    },
    async handle(clients, ctx) {
      const reply = await bus.request(Subjects.clients.create, {
        tenant_id: tenantOf(ctx),
        clients,
      });
      return { status: 201, body: reply };
    },
  };

  const update: Endpoint<{ clientId: string; client: ClientUpdateRequest }> = {
    method: 'put',
    path: '/api/v1/clients/:uuid',
    idempotency: 'required',
    parse(ctx) {
      const clientId = uuidParam(ctx, 'uuid');
      const result = validateUpdate(requestBody(ctx));
      if (!result.ok) throw validationError(result.errors);
      return { clientId, client: result.value };
    },
    async handle({ clientId, client }, ctx) {
      const reply = await bus.request(Subjects.clients.update, {
        tenant_id: tenantOf(ctx),
        client_id: clientId,
        client,
      });
      return { status: 200, body: reply };
    },
  };

  return [create, update] as Endpoint<unknown>[];
}

function tenantOf(ctx: GatewayContext): string {
  return ctx.state.tenantId!;
}
