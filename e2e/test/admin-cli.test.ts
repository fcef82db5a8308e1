import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '@payments/db';
import { databaseExists, freePort } from '../support/launcher';
import { startSystem, type TestSystem } from '../support/system';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** Runs `npm run admin -- <args>` exactly as an operator types it (the project .npmrc keeps npm's banner out of stdout), against the test database. */
async function admin(
  databaseUrl: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', 'admin', '--', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** `npm run <args>` exactly as typed, `--` or not. */
async function npmRun(
  databaseUrl: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

it('tenant create --json prints tenant_id, integration_token and signing_secret; the token authenticates; revoke stops it', async () => {
  const created = await admin(system.databaseUrl, 'tenant', 'create', '--name', 'CLI Corp', '--json');
  expect(created.code).toBe(0);
  const tenant = JSON.parse(created.stdout) as {
    tenant_id: string;
    integration_token: string;
    signing_secret: string;
    token_id: string;
  };
  expect(tenant.tenant_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(tenant.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  expect(Buffer.from(tenant.signing_secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

  const auth = await system.api.post('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);

  const second = await admin(system.databaseUrl, 'token', 'create', '--tenant', tenant.tenant_id, '--json');
  const extra = JSON.parse(second.stdout) as { integration_token: string; token_id: string };
  expect(
    (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${extra.integration_token}` }))
      .status,
  ).toBe(200);

  const revoked = await admin(system.databaseUrl, 'token', 'revoke', tenant.token_id);
  expect(revoked.code).toBe(0);
  expect(
    (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integration_token}` }))
      .status,
  ).toBe(401);
  // The tenant's other token still works.
  expect(
    (await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${extra.integration_token}` }))
      .status,
  ).toBe(200);

  const list = await admin(system.databaseUrl, 'tenant', 'list', '--json');
  const tenants = JSON.parse(list.stdout) as Array<{ tenant_id: string; active_tokens: number }>;
  expect(tenants.find((t) => t.tenant_id === tenant.tenant_id)?.active_tokens).toBe(1);
});

it('explains its mistakes with a non-zero exit code', async () => {
  const noName = await admin(system.databaseUrl, 'tenant', 'create');
  expect(noName.code).toBe(1);
  expect(noName.stderr).toMatch(/--name/);
  const unknown = await admin(system.databaseUrl, 'frobnicate', 'now');
  expect(unknown.code).toBe(2);
  const revokeNothing = await admin(system.databaseUrl, 'token', 'revoke', 'itk_nope');
  expect(revokeNothing.code).toBe(1);
});

describe("a database that is not the running system's is refused in one line, and nothing is created", () => {
  it('a database that does not exist (a typo in DATABASE_URL)', async () => {
    const name = `test_typo_${randomBytes(4).toString('hex')}`;
    const url = `postgres://postgres@127.0.0.1:5432/${name}`;
    const out = await admin(url, 'tenant', 'create', '--name', 'Typo Corp', '--json');
    expect(out.stderr).toBe(
      `error: database "${name}" does not exist (DATABASE_URL=${url}): set DATABASE_URL to the database npm start uses (npm start creates it on its first start)\n`,
    );
    expect(out.stdout).toBe('');
    expect(out.code).toBe(1);
    expect(await databaseExists(name)).toBe(false);
  });

  it('a database without the gateway tables', async () => {
    const empty = await createTestDatabase();
    try {
      const name = new URL(empty.url).pathname.slice(1);
      const out = await admin(empty.url, 'tenant', 'create', '--name', 'Nowhere Corp');
      expect(out.stderr).toBe(
        `error: database "${name}" has no gateway tables (DATABASE_URL=${empty.url}): start the gateway on it once (npm start), or set DATABASE_URL to the database npm start uses\n`,
      );
      expect(out.code).toBe(1);
      // Still nothing of the gateway's there.
      const c = new pg.Client({ connectionString: empty.url });
      await c.connect();
      try {
        expect((await c.query(`select 1 from pg_namespace where nspname = 'gateway'`)).rowCount).toBe(0);
      } finally {
        await c.end();
      }
    } finally {
      await empty.drop();
    }
  });

  it('a database the gateway has not migrated to the latest yet', async () => {
    const old = await createTestDatabase();
    try {
      const c = new pg.Client({ connectionString: old.url });
      await c.connect();
      try {
        await c.query(
          `create schema gateway; create table gateway.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`,
        );
        await c.query(`insert into gateway.kysely_migration values ('0001_tenants_and_tokens', now()::text)`);
      } finally {
        await c.end();
      }
      const out = await admin(old.url, 'tenant', 'list');
      expect(out.stderr).toMatch(
        /^error: the gateway tables in database "\w+" lack migration 0002_idempotency_keys[^\n]*: restart the gateway \(npm start\) to migrate them\n$/,
      );
      expect(out.code).toBe(1);
    } finally {
      await old.drop();
    }
  });

  it('PostgreSQL out of reach: names the URL (password masked) and what to do', async () => {
    const port = await freePort();
    const out = await admin(`postgres://postgres:s3cret@127.0.0.1:${port}/receivables`, 'tenant', 'list');
    expect(out.stderr).toBe(
      `error: cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/receivables (connection refused): start PostgreSQL or set DATABASE_URL\n`,
    );
    expect(out.code).toBe(1);
  });
});

describe('npm run admin without the -- (npm keeps the flags for itself)', () => {
  async function tenantCount(): Promise<number> {
    return (JSON.parse((await admin(system.databaseUrl, 'tenant', 'list', '--json')).stdout) as unknown[]).length;
  }

  it('tenant create --name X --json: says how to type it and creates nothing', async () => {
    const before = await tenantCount();
    const out = await npmRun(system.databaseUrl, 'admin', 'tenant', 'create', '--name', 'Acme ERP', '--json');
    expect(out.stderr).toBe(
      `error: npm kept --name and --json for itself (flags before -- go to npm, not to the script): run it as npm run admin -- tenant create --name 'Acme ERP' --json\n`,
    );
    expect(out.code).toBe(2);
    expect(await tenantCount()).toBe(before);
  });

  it('token list --tenant <id>: npm even leaves the id behind as a stray word', async () => {
    const tenantId = '0b6f2c1e-0000-4000-8000-000000000001';
    const out = await npmRun(system.databaseUrl, 'admin', 'token', 'list', '--tenant', tenantId);
    expect(out.stderr).toBe(
      `error: npm kept --tenant for itself (flags before -- go to npm, not to the script): run it as npm run admin -- token list --tenant ${tenantId}\n`,
    );
    expect(out.code).toBe(2);
  });

  it('tenant account: dashed flags too; values that lost their flag are not guessed at', async () => {
    const tenantId = '0b6f2c1e-0000-4000-8000-000000000002';
    const one = await npmRun(system.databaseUrl, 'admin', 'tenant', 'account', '--tenant', tenantId, '--json');
    expect(one.stderr).toBe(
      `error: npm kept --tenant and --json for itself (flags before -- go to npm, not to the script): run it as npm run admin -- tenant account --tenant ${tenantId} --json\n`,
    );
    // Two flags left their values behind as stray words: which is which is unknown, so placeholders.
    const several = await npmRun(
      system.databaseUrl,
      ...['admin', 'tenant', 'account', '--tenant', tenantId, '--provider', 'sandbox'],
      '--beneficiary-name=Acme Ltda',
    );
    expect(several.stderr).toBe(
      `error: npm kept --tenant, --provider and --beneficiary-name for itself (flags before -- go to npm, not to the script): run it as npm run admin -- tenant account --tenant <tenant_id> --provider <provider> --beneficiary-name 'Acme Ltda'\n`,
    );
    expect(several.code).toBe(2);
  });
});
