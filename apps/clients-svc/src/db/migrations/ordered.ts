import type { Migration } from 'kysely';
import { clients } from './0001_clients';
import { clientIdAsSent } from './0002_client_id_as_sent';

/** The schema's migrations in the order they run, one file each, named after its key. */
export const migrations: Record<string, Migration> = {
  '0001_clients': clients,
  '0002_client_id_as_sent': clientIdAsSent,
};
