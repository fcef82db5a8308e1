import pg from 'pg';

/**
 * The services' own schemas: what a request can make them store (clients, charges and their jobs,
 * booklets, callback events). The gateway's schema is left out on purpose: an Idempotency-Key's
 * stored 4xx answer is allowed to remain (docs/api.md, Idempotency).
 */
export const DOMAIN_SCHEMAS = ['clients', 'receivables', 'booklets', 'callbacks'];

/**
 * Tables derived from the others on a timer, not by a request: the receivables' state counters and
 * the journal of their changes, which a fold empties every few seconds (docs/architecture.md,
 * Receivables over the years). Counting them would see that fold as a change a refused request made.
 */
const DERIVED_TABLES = ['receivables.state_counts', 'receivables.state_count_changes'];

async function withClient<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function tables(client: pg.Client, onlyWithTenant: boolean): Promise<string[]> {
  const rows = await client.query<{ name: string }>(
    `select distinct format('%I.%I', t.table_schema, t.table_name) as name
       from information_schema.tables t
       ${onlyWithTenant ? "join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name and c.column_name = 'tenant_id'" : ''}
      where t.table_schema = any($1) and t.table_type = 'BASE TABLE' and t.table_name not like 'kysely_%'
      order by 1`,
    [DOMAIN_SCHEMAS],
  );
  return rows.rows.map((r) => r.name).filter((name) => !DERIVED_TABLES.includes(name));
}

/** Rows of `tenantId` in every domain table that has a tenant_id column (only tables with rows listed). */
export async function tenantRows(databaseUrl: string, tenantId: string): Promise<Record<string, number>> {
  return withClient(databaseUrl, async (client) => {
    const counts: Record<string, number> = {};
    for (const table of await tables(client, true)) {
      const { rows } = await client.query<{ n: string }>(
        `select count(*) as n from ${table} where tenant_id::text = $1`,
        [tenantId],
      );
      if (Number(rows[0].n) > 0) counts[table] = Number(rows[0].n);
    }
    return counts;
  });
}

/** Rows of every domain table, whoever they belong to (outboxes, jobs and attempts included). */
export async function tableTotals(databaseUrl: string): Promise<Record<string, number>> {
  return withClient(databaseUrl, async (client) => {
    const counts: Record<string, number> = {};
    for (const table of await tables(client, false)) {
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from ${table}`);
      counts[table] = Number(rows[0].n);
    }
    return counts;
  });
}

/** The tables whose counts differ, with before and after. */
export function changedTables(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, { before: number; after: number }> {
  const changed: Record<string, { before: number; after: number }> = {};
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if ((before[table] ?? 0) !== (after[table] ?? 0))
      changed[table] = { before: before[table] ?? 0, after: after[table] ?? 0 };
  }
  return changed;
}
