import {
  ClientsCreateRequestSchema,
  ClientsCreateResponseSchema,
  ClientUpdateRequestSchema,
  ClientUpdateResponseSchema,
} from '../clients';
import { operation } from './operation-types';
import { GUARDED, JSON_BODY, IDEMPOTENCY_REQUIRED, unavailable, uuidPath } from './operation-parts';
import * as ex from './examples';

/** Clients: registering and updating the payers of charges. In the order of the list. */
export const CLIENT_OPERATIONS = [
  operation({
    method: 'post',
    path: '/api/v1/clients',
    operationId: 'createClients',
    tag: 'Clients',
    summary: 'Create one or more clients',
    description:
      'A batch of 1 to 1,000 clients, all or nothing: one invalid item rejects the request and nothing is stored. ' +
      'A client_id already registered for the tenant is listed under `clients_already_registered` and is not changed. ' +
      'With `return_client_data: true` a created client comes back with its data in the Portuguese keys of the interface.',
    security: 'access_token',
    idempotency: 'required',
    requestBody: {
      description:
        'The clients to register. name and cnpj_cpf (valid CPF or CNPJ check digits, punctuation optional) are required.',
      schema: ClientsCreateRequestSchema,
      examples: { batch: ex.example('A person (data returned) and a company', ex.clientsCreateRequest) },
    },
    success: {
      status: 201,
      description: 'Created (also when every client was already registered).',
      schema: ClientsCreateResponseSchema,
      examples: {
        created: ex.example('Both created; the first asked for its data', ex.clientsCreateResponse),
        alreadyRegistered: ex.example(
          'The same batch sent again with a new Idempotency-Key',
          ex.clientsAlreadyRegisteredResponse,
        ),
      },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      payload_too_large: 'the body is larger than 1 MiB, or the batch has more than 1,000 items',
      ...IDEMPOTENCY_REQUIRED,
      validation_failed: 'a field is invalid; `errors` names every one by JSON pointer (e.g. /3/cnpj_cpf)',
      ...unavailable('clients'),
    },
  }),
  operation({
    method: 'put',
    path: '/api/v1/clients/{uuid}',
    operationId: 'updateClient',
    tag: 'Clients',
    summary: 'Update a client',
    description: 'Replaces the client data; the same fields as creation without client_id and return_client_data.',
    security: 'access_token',
    idempotency: 'required',
    pathParameters: [uuidPath('The client_id given when the client was registered', ex.Ids.clientPerson)],
    requestBody: {
      description: 'The new client data.',
      schema: ClientUpdateRequestSchema,
      examples: { update: ex.example('A new address and e-mail', ex.clientUpdateRequest) },
    },
    success: {
      status: 200,
      description: 'Updated; the registered data comes back in the Portuguese keys of the interface.',
      schema: ClientUpdateResponseSchema,
      examples: { updated: ex.example('Updated', ex.clientUpdateResponse) },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      ...IDEMPOTENCY_REQUIRED,
      not_found: 'no client with this client_id for the tenant',
      validation_failed: 'uuid is not a UUID, or a field is invalid; `errors` names every one',
      ...unavailable('clients'),
    },
  }),
] as const;
