import pg from 'pg';

/*
 * Database errors injected from outside the service, with no hook in production code: a trigger
 * that makes the first `times` writes of a bank's charge id to a receivable fail, as a dropped
 * connection or a failed commit would, right after the bank accepted the create. The counter is a
 * sequence: nextval is not undone when the failing transaction rolls back, so each fault fires once.
 */

const SCHEMA = 'e2e_faults';

export interface InjectedFault {
  /** How many writes it has failed so far. */
  fired(): Promise<number>;
  remove(): Promise<void>;
}

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Fails the first `times` updates of receivables.receivables that set provider_charge_id where none was. */
export async function failChargeIdWrites(databaseUrl: string, times: number): Promise<InjectedFault> {
  await withClient(databaseUrl, async (client) => {
    await client.query(`create schema if not exists ${SCHEMA}`);
    await client.query(`create sequence if not exists ${SCHEMA}.charge_id_writes`);
    await client.query(`
      create or replace function ${SCHEMA}.fail_charge_id_write() returns trigger language plpgsql as $$
      begin
        if nextval('${SCHEMA}.charge_id_writes') <= ${Number(times)} then
          raise exception 'e2e fault: the database failed right after the bank created charge %', new.provider_charge_id;
        end if;
        return new;
      end $$`);
    // The trigger runs as the service's role, which may use only its own schema unless told.
    await client.query(`grant usage on schema ${SCHEMA} to public`);
    await client.query(`grant usage on sequence ${SCHEMA}.charge_id_writes to public`);
    await client.query(`
      create trigger e2e_fail_charge_id_write before update on receivables.receivables for each row
        when (old.provider_charge_id is null and new.provider_charge_id is not null)
        execute function ${SCHEMA}.fail_charge_id_write()`);
  });
  return {
    fired: () =>
      withClient(databaseUrl, async (client) => {
        const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
          `select last_value, is_called from ${SCHEMA}.charge_id_writes`,
        );
        return rows[0].is_called ? Math.min(Number(rows[0].last_value), times) : 0;
      }),
    remove: () =>
      withClient(databaseUrl, async (client) => {
        await client.query('drop trigger if exists e2e_fail_charge_id_write on receivables.receivables');
        await client.query(`drop schema if exists ${SCHEMA} cascade`);
      }),
  };
}
