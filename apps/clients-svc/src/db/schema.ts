import type { ColumnType, Generated, Selectable } from 'kysely';

/** Tables of schema `clients`. */
export interface ClientsTable {
  tenant_id: string;
  /** The key: a uuid, so any spelling of the id matches. */
  client_id: string;
  /** The id exactly as the ERP sent it when it created the client: what every answer shows. */
  client_id_as_sent: string;
  name: string;
  /** As the ERP wrote it (punctuation kept). */
  tax_id: string;
  /** Without punctuation, upper case: for lookups. */
  tax_id_normalized: string;
  address: string | null;
  number: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  complement: string | null;
  telephone: string | null;
  phone_number: string | null;
  email: string | null;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date>;
  version: Generated<number>;
}

export interface ClientsDatabase {
  clients: ClientsTable;
}

export type ClientRow = Selectable<ClientsTable>;
