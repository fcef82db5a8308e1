import pg from 'pg';

/** Reads a service's tables directly, to check what a request did or did not store. */
export async function queryRows<T extends Record<string, unknown>>(
  databaseUrl: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

export async function countClients(databaseUrl: string, tenantId?: string): Promise<number> {
  const rows = await queryRows<{ n: string }>(
    databaseUrl,
    tenantId
      ? 'select count(*) as n from clients.clients where tenant_id = $1'
      : 'select count(*) as n from clients.clients',
    tenantId ? [tenantId] : [],
  );
  return Number(rows[0].n);
}
