import { Type, type Static } from '@sinclair/typebox';
import { Batch, OptionalText, RequiredText, Uuid } from './common';

/** The 26 states and the Federal District. */
export const BRAZILIAN_STATES = [
  'AC',
  'AL',
  'AP',
  'AM',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MT',
  'MS',
  'MG',
  'PA',
  'PB',
  'PR',
  'PE',
  'PI',
  'RJ',
  'RN',
  'RS',
  'RO',
  'RR',
  'SC',
  'SP',
  'SE',
  'TO',
] as const;

/** Fields shared by client create and update. name and cnpj_cpf are required (docs/api.md, Clients). */
const clientFields = {
  name: RequiredText(),
  cnpj_cpf: Type.String({ format: 'cpf-cnpj', maxLength: 18, description: 'CPF or CNPJ, punctuation optional' }),
  address: OptionalText(),
  number: OptionalText(),
  neighborhood: OptionalText(),
  city: OptionalText(),
  state: Type.Optional(
    Type.Union([Type.Union(BRAZILIAN_STATES.map((uf) => Type.Literal(uf))), Type.Null()], {
      description: 'Two-letter Brazilian state code (UF), upper case',
    }),
  ),
  zip_code: OptionalText(9, { pattern: '^(\\d{5}-?\\d{3})?$', description: 'CEP, e.g. 01310-100' }),
  complement: OptionalText(),
  telephone: OptionalText(15, { pattern: '^(\\d{8,15})?$', description: 'Landline, digits only' }),
  phone_number: OptionalText(15, { pattern: '^(\\d{8,15})?$', description: 'Mobile, digits only' }),
  email: OptionalText(255, { format: 'email-or-empty' }),
};

export const ClientCreateItemSchema = Type.Object(
  {
    client_id: Uuid('Client identifier in the ERP'),
    ...clientFields,
    return_client_data: Type.Optional(Type.Boolean()),
  },
  { $id: 'ClientCreateItem' },
);
export type ClientCreateItem = Static<typeof ClientCreateItemSchema>;

export const ClientsCreateRequestSchema = Batch(ClientCreateItemSchema, 'ClientsCreateRequest');
export type ClientsCreateRequest = Static<typeof ClientsCreateRequestSchema>;

export const ClientUpdateRequestSchema = Type.Object(clientFields, { $id: 'ClientUpdateRequest' });
export type ClientUpdateRequest = Static<typeof ClientUpdateRequestSchema>;

/** The returned client data object, with the Portuguese keys of the interface spec. */
export const ClientDataSchema = Type.Object(
  {
    razao: Type.String(),
    cnpj_cpf: Type.String(),
    endereco: Type.Union([Type.String(), Type.Null()]),
    numero: Type.Union([Type.String(), Type.Null()]),
    bairro: Type.Union([Type.String(), Type.Null()]),
    cidade: Type.Union([Type.String(), Type.Null()]),
    uf: Type.Union([Type.String(), Type.Null()]),
    cep: Type.Union([Type.String(), Type.Null()]),
    complemento: Type.Union([Type.String(), Type.Null()]),
    fone: Type.Union([Type.String(), Type.Null()]),
    telefone_celular: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ClientData' },
);
export type ClientData = Static<typeof ClientDataSchema>;

export const ClientRefSchema = Type.Object({ client_id: Uuid() });
export const CreatedClientSchema = Type.Object({ client_id: Uuid(), data: Type.Optional(ClientDataSchema) });
export type CreatedClient = Static<typeof CreatedClientSchema>;

export const ClientsCreateResponseSchema = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    total_created_clients: Type.Array(CreatedClientSchema),
    clients_already_registered: Type.Array(ClientRefSchema),
  },
  { $id: 'ClientsCreateResponse' },
);
export type ClientsCreateResponse = Static<typeof ClientsCreateResponseSchema>;

export const ClientUpdateResponseSchema = Type.Object(
  { status: Type.Literal('success'), message: Type.String(), data: ClientDataSchema },
  { $id: 'ClientUpdateResponse' },
);
export type ClientUpdateResponse = Static<typeof ClientUpdateResponseSchema>;

/** Bus messages (gateway -> clients-svc). */
export interface ClientsCreateCommand {
  tenant_id: string;
  clients: ClientCreateItem[];
}
export interface ClientUpdateCommand {
  tenant_id: string;
  client_id: string;
  client: ClientUpdateRequest;
}

/** receivables-svc -> clients-svc: who are these clients (the payer printed on a charge)? */
export interface ClientsLookupCommand {
  tenant_id: string;
  client_ids: string[];
}
export interface PayerSnapshot {
  /** As spelled when the client was created; compare in lower case. */
  client_id: string;
  name: string;
  cnpj_cpf: string;
  address: string | null;
  number: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  email: string | null;
}
/** Only the clients found; a missing id is absent. */
export interface ClientsLookupReply {
  clients: PayerSnapshot[];
}
