import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '@payments/db';
import { runAdmin } from '../support/admin-cli';
import { databaseExists, freePort } from '../support/launcher';
import { startSystem, type TestSystem } from '../support/system';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** Runs `npm run -s admin -- <args>` as an operator types it to capture its output (-s keeps npm's banner and its own error lines out), against the test database. */
async function admin(
  databaseUrl: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'admin', '--', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** `npm run -s <args>` exactly as typed, `--` or not. */
async function npmRun(
  databaseUrl: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', ...args], {
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

it('operator invite --email prints a one-time invitation the admin API then opens for that operator', async () => {
  const email = `Ops.${Date.now()}@Example.com`;
  const out = await admin(system.databaseUrl, 'operator', 'invite', '--email', email, '--json');
  expect(out.code).toBe(0);
  const invitation = JSON.parse(out.stdout) as { email: string; role: string; invitation_token: string };
  expect(invitation).toMatchObject({ email: email.toLowerCase(), role: 'operator' });
  const opened = await fetch(`${system.gateway.adminUrl}/admin/v1/invitations/${invitation.invitation_token}`);
  expect(opened.status).toBe(200);
  expect(await opened.json()).toMatchObject({ email: email.toLowerCase(), role: 'operator' });
  // Without --email: refused, naming the flag.
  const noEmail = await admin(system.databaseUrl, 'operator', 'invite');
  expect(noEmail.code).toBe(1);
  expect(noEmail.stderr).toContain('operator invite needs --email');
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
  const revokeNothing = await admin(system.databaseUrl, 'token', 'revoke', '00000000-0000-4000-8000-000000000000');
  expect(revokeNothing.code).toBe(1);
  // A token itself on the command line (ps, shell history) is refused without echoing it.
  const inline = await admin(system.databaseUrl, 'token', 'revoke', 'itk_nope');
  expect(inline.code).toBe(2);
  expect(inline.stderr).toMatch(/never taken on the command line/);
  expect(inline.stderr).not.toContain('itk_nope');
});

it('in production, refuses its bus commands with a development NATS password, however it is written', async () => {
  // The deploy's own users (admin for bus provision, admin-cli for jobs) with their development
  // passwords, one with a trailing newline as a secret file often has: each refused before any login.
  const attempts = [
    { args: ['bus', 'provision'], user: 'admin', password: 'development-nats-admin' },
    { args: ['jobs', 'dead'], user: 'admin-cli', password: 'development-nats-admin-cli\n' },
  ];
  for (const { args, user, password } of attempts) {
    const refused = await runAdmin(system.databaseUrl, args, {
      env: { NODE_ENV: 'production', NATS_USER: user, NATS_PASSWORD: password },
    });
    expect({ args, code: refused.code }).toEqual({ args, code: 1 });
    expect(refused.stderr).toMatch(/NATS_PASSWORD is the public development default/);
  }
});

describe('the audit of operator actions', () => {
  /** `npm run admin -- <args>` as the operator `operator` (ADMIN_OPERATOR), with `stdin` piped in. */
  async function as(operator: string, args: string[], stdin?: string) {
    const out = await runAdmin(system.databaseUrl, args, { env: { ADMIN_OPERATOR: operator }, stdin });
    if (out.code !== 0) throw new Error(`${args.join(' ')} exited ${out.code}: ${out.stderr}`);
    return out.stdout;
  }

  it('records who created, issued, revoked, set and rotated, in order, with no secret in the rows or the database', async () => {
    const tenant = JSON.parse(await as('alice', ['tenant', 'create', '--name', 'Audited Corp', '--json'])) as {
      tenant_id: string;
      integration_token: string;
      signing_secret: string;
      token_id: string;
    };
    const token = JSON.parse(await as('bob', ['token', 'create', '--tenant', tenant.tenant_id, '--json'])) as {
      token_id: string;
      integration_token: string;
    };
    // The token itself, from stdin.
    await as('bob', ['token', 'revoke', '-'], `${token.integration_token}\n`);
    const account = JSON.parse(
      await as('carol', [
        ...['tenant', 'account', '--tenant', tenant.tenant_id, '--provider', 'sandbox'],
        ...['--beneficiary-name', 'Audited Ltda', '--beneficiary-tax-id', '11.222.333/0001-81', '--json'],
      ]),
    ) as { account_id: string };
    const rotated = JSON.parse(
      await as('alice', ['tenant', 'rotate-secret', '--tenant', tenant.tenant_id, '--overlap-hours', '2', '--json']),
    ) as { signing_secret: string; previous_valid_until: string };
    // --operator wins over ADMIN_OPERATOR.
    await as('nobody', ['tenant', 'disable', tenant.tenant_id, '--operator', 'dave']);

    const listed = await runAdmin(system.databaseUrl, ['audit', '--tenant', tenant.tenant_id, '--json']);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{
      id: number;
      at: string;
      operator: string;
      action: string;
      tenant_id: string;
      details: Record<string, unknown>;
    }>;
    expect(rows.map((r) => [r.operator, r.action])).toEqual([
      ['alice', 'tenant.create'],
      ['bob', 'token.create'],
      ['bob', 'token.revoke'],
      ['carol', 'tenant.account'],
      ['alice', 'tenant.rotate-secret'],
      ['dave', 'tenant.disable'],
    ]);
    expect(rows.every((r) => r.tenant_id === tenant.tenant_id)).toBe(true);
    const at = rows.map((r) => Date.parse(r.at));
    expect(at.every((t, i) => !Number.isNaN(t) && (i === 0 || t >= at[i - 1]))).toBe(true);
    expect(rows[0].details).toMatchObject({ name: 'Audited Corp', token_id: tenant.token_id });
    expect(rows[1].details).toEqual({ token_id: token.token_id });
    expect(rows[2].details).toEqual({ token_id: token.token_id });
    expect(rows[3].details).toMatchObject({ account_id: account.account_id, provider: 'sandbox', credentials: 'none' });
    expect(rows[4].details).toEqual({ overlap_hours: 2, previous_valid_until: rotated.previous_valid_until });
    for (const secret of [
      tenant.signing_secret,
      rotated.signing_secret,
      tenant.integration_token,
      token.integration_token,
    ])
      expect(listed.stdout).not.toContain(secret);
    // The human listing says the same.
    const human = await runAdmin(system.databaseUrl, ['audit', '--tenant', tenant.tenant_id]);
    expect(human.stdout.trim().split('\n')).toHaveLength(6);
    expect(human.stdout).toContain('alice  tenant.rotate-secret');

    // No signing secret is readable anywhere in the gateway's schema.
    const c = new pg.Client({ connectionString: system.databaseUrl });
    await c.connect();
    try {
      const columns = await c.query<{ table_name: string; column_name: string }>(
        `select table_name, column_name from information_schema.columns
         where table_schema = 'gateway' and data_type in ('text', 'jsonb', 'character varying')`,
      );
      expect(columns.rows.length).toBeGreaterThan(5);
      const found: string[] = [];
      for (const { table_name, column_name } of columns.rows) {
        const hits = await c.query(
          `select 1 from gateway."${table_name}" where "${column_name}"::text like '%whsec_%'`,
        );
        if (hits.rowCount) found.push(`${table_name}.${column_name}`);
      }
      expect(found).toEqual([]);
    } finally {
      await c.end();
    }
  }, 60_000);

  it('in production, a change without an operator is refused and changes nothing', async () => {
    const before = (JSON.parse((await admin(system.databaseUrl, 'tenant', 'list', '--json')).stdout) as unknown[])
      .length;
    const out = await runAdmin(system.databaseUrl, ['tenant', 'create', '--name', 'Nobody Corp', '--json'], {
      env: { NODE_ENV: 'production', ADMIN_OPERATOR: '' },
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^error: who runs this is recorded in the audit: set ADMIN_OPERATOR/);
    expect(out.stdout).toBe('');
    const after = (JSON.parse((await admin(system.databaseUrl, 'tenant', 'list', '--json')).stdout) as unknown[])
      .length;
    expect(after).toBe(before);
  });
});

describe("a database that is not the running system's is refused in one line, and nothing is created", () => {
  it('a database that does not exist (a typo in DATABASE_URL)', async () => {
    const name = `test_typo_${randomBytes(4).toString('hex')}`;
    const url = `postgres://postgres@127.0.0.1:5432/${name}`;
    const out = await admin(url, 'tenant', 'create', '--name', 'Typo Corp', '--json');
    expect(out.stderr).toBe(
      `error: database "${name}" does not exist (DATABASE_URL=${url}): set DATABASE_URL to the database npm start uses (npm run migrate creates it; npm start runs it)\n`,
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
        `error: database "${name}" has no gateway tables (DATABASE_URL=${empty.url}): run npm run migrate on it, or set DATABASE_URL to the database npm start uses\n`,
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
        // As an older npm run migrate left it: the gateway's role may read its schema.
        await c.query(`grant usage on schema gateway to public; grant select on gateway.kysely_migration to public`);
      } finally {
        await c.end();
      }
      const out = await admin(old.url, 'tenant', 'list');
      expect(out.stderr).toMatch(
        /^error: the gateway tables in database "\w+" lack migration 0002_idempotency_keys[^\n]*: run npm run migrate\n$/,
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
