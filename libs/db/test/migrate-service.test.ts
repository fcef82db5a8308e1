import { sql, type Migration } from 'kysely';
import pg from 'pg';
import {
  assertServiceSchema,
  createDatabase,
  createTestDatabase,
  migrateService,
  SchemaNotMigratedError,
  serviceDatabaseUrl,
  ServiceRoleError,
} from '../src';

const SCHEMA = 'svc_mig';
const ROLE = 'svc_mig_svc';

let test: { url: string; drop: () => Promise<void> };

beforeEach(async () => {
  test = await createTestDatabase();
});

afterEach(async () => {
  await test.drop();
});

/** One query on a fresh connection to `url`. */
async function query<R extends object>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const first: Record<string, Migration> = {
  '0001_items': {
    up: async (db) => {
      await sql`create table items (id bigserial primary key, k text not null)`.execute(db);
    },
  },
};
const both: Record<string, Migration> = {
  ...first,
  '0002_column': {
    up: async (db) => {
      await sql`alter table items add column note text`.execute(db);
    },
  },
};

it('migrates as the role: it owns the schema and its tables, and its settings are what its own connection shows', async () => {
  const run = await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
  expect(run).toMatchObject({ schema: SCHEMA, role: ROLE, applied: ['0001_items', '0002_column'], aheadBy: [] });
  const owners = await query<{ name: string; owner: string }>(
    test.url,
    `select c.relname as name, pg_get_userbyid(c.relowner) as owner from pg_class c
     join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind in ('r', 'S')
     union all select nspname, pg_get_userbyid(nspowner) from pg_namespace where nspname = $1`,
    [SCHEMA],
  );
  expect(owners.length).toBeGreaterThanOrEqual(4); // schema, items, its sequence, kysely_migration
  expect(owners.filter((o) => o.owner !== ROLE)).toEqual([]);

  const app = serviceDatabaseUrl(test.url, SCHEMA);
  expect(new URL(app).username).toBe(ROLE);
  const [shown] = await query<Record<string, string>>(
    app,
    `select current_user as "user", current_setting('search_path') as search_path,
            current_setting('statement_timeout') as statement_timeout,
            current_setting('idle_in_transaction_session_timeout') as idle,
            current_setting('lock_timeout') as lock_timeout`,
  );
  expect(shown).toEqual({
    user: ROLE,
    search_path: SCHEMA,
    statement_timeout: '30s',
    idle: '1min',
    lock_timeout: '10s',
  });
  const db = createDatabase({ url: app, schema: SCHEMA });
  try {
    await expect(assertServiceSchema(db, SCHEMA, both)).resolves.toEqual({ aheadBy: [] });
    // The role writes its own tables, unqualified.
    await sql`insert into items (k, note) values ('a', 'b')`.execute(db);
  } finally {
    await db.destroy();
  }
});

it('is idempotent: a second run applies nothing and changes nothing', async () => {
  await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
  const again = await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
  expect(again).toMatchObject({ applied: [], aheadBy: [], indexesBuilt: [] });
  const rows = await query<{ name: string }>(test.url, `select name from ${SCHEMA}.kysely_migration order by name`);
  expect(rows.map((r) => r.name)).toEqual(['0001_items', '0002_column']);
});

it('gives the role a schema an earlier release migrated as the connecting user, and migrates on from there', async () => {
  // What an earlier release left: objects owned by postgres, Kysely's bookkeeping tables.
  await query(
    test.url,
    `create schema ${SCHEMA};
     create table ${SCHEMA}.items (id bigserial primary key, k text not null);
     create function ${SCHEMA}.twice(x int) returns int language sql as 'select x * 2';
     create table ${SCHEMA}.kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null);
     create table ${SCHEMA}.kysely_migration_lock (id varchar(255) not null primary key, is_locked integer not null default 0);
     insert into ${SCHEMA}.kysely_migration values ('0001_items', now()::text);`,
  );
  const run = await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
  expect(run.applied).toEqual(['0002_column']); // altering a table it did not create: it owns it now
  const notOwned = await query<{ name: string }>(
    test.url,
    `select relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where nspname = $1 and pg_get_userbyid(relowner) <> $2
     union all select proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where nspname = $1 and pg_get_userbyid(proowner) <> $2`,
    [SCHEMA, ROLE],
  );
  expect(notOwned).toEqual([]);
});

it('two runs at once apply each migration once', async () => {
  let ups = 0;
  const counted: Record<string, Migration> = {
    '0001_items': {
      up: async (db) => {
        ups++;
        await sql`select pg_sleep(0.2)`.execute(db);
        await sql`create table items (id bigserial primary key, k text not null)`.execute(db);
      },
    },
  };
  const runs = await Promise.all(
    [1, 2, 3].map(() => migrateService({ url: test.url, schema: SCHEMA, migrations: counted })),
  );
  expect(ups).toBe(1);
  expect(runs.flatMap((r) => r.applied)).toEqual(['0001_items']);
});

it('a migration waiting on a lock gives up after lock_timeout and retries, so writers never queue behind it for long', async () => {
  await migrateService({ url: test.url, schema: SCHEMA, migrations: first });
  // A long transaction that read the table: the migration's ALTER waits for it.
  const holder = new pg.Client({ connectionString: test.url });
  await holder.connect();
  await holder.query(`begin; select count(*) from ${SCHEMA}.items`);
  const warnings: object[] = [];
  const logger = {
    info: () => undefined,
    error: () => undefined,
    warn: (details: object) => void warnings.push(details),
  };
  const migrating = migrateService({
    url: test.url,
    schema: SCHEMA,
    migrations: both,
    lockTimeoutMs: 300,
    retryDelayMs: 200,
    logger,
  });
  // Writers keep coming while the holder holds on for 3 s: each waits at most one lock_timeout.
  const slowest = await (async () => {
    let worst = 0;
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const t0 = Date.now();
      await query(test.url, `insert into ${SCHEMA}.items (k) values ('w')`);
      worst = Math.max(worst, Date.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
    return worst;
  })();
  await holder.query('commit');
  await holder.end();
  const run = await migrating;
  expect(run.applied).toEqual(['0002_column']);
  expect(warnings.length).toBeGreaterThanOrEqual(2); // it gave up and came back, several times
  expect(slowest).toBeLessThan(1_500); // never the holder's 3 s
}, 30_000);

describe('assertServiceSchema, at an app start', () => {
  it('refuses a connection whose role is not the service role, saying which to use', async () => {
    await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
    const db = createDatabase({ url: test.url, schema: SCHEMA }); // as postgres
    try {
      const failure = await assertServiceSchema(db, SCHEMA, both).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ServiceRoleError);
      expect(failure).toMatchObject({
        startupProblem: true,
        message: expect.stringMatching(
          /^connected to PostgreSQL as role postgres.*connect as role svc_mig_svc .*run npm run migrate$/,
        ),
      });
    } finally {
      await db.destroy();
    }
  });

  it('refuses a schema missing migrations, naming them; accepts one ahead of the code', async () => {
    await migrateService({ url: test.url, schema: SCHEMA, migrations: first });
    const db = createDatabase({ url: serviceDatabaseUrl(test.url, SCHEMA), schema: SCHEMA });
    try {
      const failure = await assertServiceSchema(db, SCHEMA, both).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(SchemaNotMigratedError);
      expect((failure as Error).message).toBe(
        'schema svc_mig is not migrated (missing: 0002_column): run npm run migrate',
      );
      await migrateService({ url: test.url, schema: SCHEMA, migrations: both });
      await expect(assertServiceSchema(db, SCHEMA, first)).resolves.toEqual({ aheadBy: ['0002_column'] });
    } finally {
      await db.destroy();
    }
  });
});
