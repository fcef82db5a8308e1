import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, nkeys } from 'nats';
import pg from 'pg';
import { checkBus, natsServers, provisionBus, type NatsCredentials } from '@payments/bus';
import { STREAM_MAX_BYTES_DEFAULT } from '@payments/config';
import { DEV_CREDENTIALS_ENCRYPTION_KEY } from '@payments/credential-seal';
import { createTestDatabase } from '@payments/db';
import { appDatabaseUrl, migrateAll } from '@payments/scripts/migrate';
import { app, deleteStreams, dropDatabase, freePort, ROOT, waitFor } from '../support/launcher';
import { PrivateNats } from '../support/private-nats';

/**
 * Each app run alone, as a container runs it (no npm start to check first): a failure the operator can
 * fix ends the process with exit code 1 and one `fatal` JSON log line saying what is wrong and what to
 * do, with no stack.
 */
const database = `test_appstart_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const prefix = `t${randomBytes(5).toString('hex')}`;
const base = { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`, BUS_PREFIX: prefix, LOG_LEVEL: 'warn' };

beforeAll(async () => {
  // What `npm run migrate` does before a deploy's apps start: each app then logs in as its own role.
  await migrateAll({ NODE_ENV: 'development', DATABASE_URL: base.DATABASE_URL });
  // What `npm run admin -- bus provision` does before a deploy's apps start: a service that finds its
  // streams missing refuses to start (bus_not_provisioned) before it listens on its port.
  const admin = await connect({ servers: natsServers(process.env.NATS_URL ?? 'nats://127.0.0.1:4222') });
  try {
    await provisionBus(admin, { prefix, maxBytes: STREAM_MAX_BYTES_DEFAULT.development, replicas: 1 });
  } finally {
    await admin.close();
  }
}, 60_000);

afterAll(async () => {
  await dropDatabase(database);
  await deleteStreams(prefix).catch(() => undefined);
});

/** Runs the app to its exit: the code, and its single log line (there must be exactly one). */
async function failedStart(
  name: string,
  env: Record<string, string>,
): Promise<{ code: number | null; line: Record<string, unknown> }> {
  const run = app(name, { ...base, DATABASE_URL: appDatabaseUrl(name, base.DATABASE_URL), ...env });
  const { code } = await run.exit(60_000);
  const lines = run.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1 || run.stderr !== '')
    throw new Error(`expected one log line and nothing on stderr:\n${run.output}`);
  return { code, line: JSON.parse(lines[0]) as Record<string, unknown> };
}

function expectFatal(line: Record<string, unknown>, service: string, problem: string, msg: string): void {
  expect(line).toMatchObject({ level: 60, service, problem, msg });
  expect(line).not.toHaveProperty('err'); // no stack
}

async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, r));
  return { port: (server.address() as { port: number }).port, server };
}

it('gateway, NATS out of reach', async () => {
  const port = await freePort();
  const { code, line } = await failedStart('gateway', { PORT: '0', NATS_URL: `nats://127.0.0.1:${port}` });
  expectFatal(
    line,
    'gateway',
    'unreachable',
    `cannot reach NATS at nats://127.0.0.1:${port} (connection refused): start nats-server -js or set NATS_URL`,
  );
  expect(code).toBe(1);
}, 90_000);

it('gateway, PostgreSQL out of reach', async () => {
  const port = await freePort();
  const { code, line } = await failedStart('gateway', {
    PORT: '0',
    DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/receivables`,
  });
  expectFatal(
    line,
    'gateway',
    'unreachable',
    `cannot reach PostgreSQL at postgres://postgres@127.0.0.1:${port}/receivables (connection refused): start PostgreSQL or set DATABASE_URL`,
  );
  expect(code).toBe(1);
}, 90_000);

it.each([
  ['gateway', 'PORT'],
  ['clients-svc', 'CLIENTS_PORT'],
  ['receivables-svc', 'RECEIVABLES_PORT'],
])(
  '%s, its port (%s) already in use',
  async (name, variable) => {
    const { port, server } = await holdPort();
    try {
      const { code, line } = await failedStart(name, { [variable]: String(port) });
      expectFatal(
        line,
        name,
        'port_in_use',
        `port ${port} (${variable}) is already in use: stop what listens there (another npm start?) or set ${variable} to a free port`,
      );
      expect(code).toBe(1);
    } finally {
      server.close();
    }
  },
  90_000,
);

describe('a database not migrated by npm run migrate', () => {
  it('receivables-svc on a schema not migrated: names what is missing and the command', async () => {
    const empty = await createTestDatabase();
    try {
      // The role exists (other databases of the server have it) but this database has no schema of it.
      const { code, line } = await failedStart('receivables-svc', {
        DATABASE_URL: appDatabaseUrl('receivables-svc', empty.url),
      });
      expectFatal(line, 'receivables-svc', 'wrong_database_role', expect.stringMatching(/run npm run migrate$/));
      expect(code).toBe(1);
    } finally {
      await empty.drop();
    }
  }, 90_000);

  it('clients-svc connected as another role: says which role to use', async () => {
    const { code, line } = await failedStart('clients-svc', { DATABASE_URL: base.DATABASE_URL });
    expectFatal(
      line,
      'clients-svc',
      'wrong_database_role',
      expect.stringMatching(
        /^connected to PostgreSQL as role postgres, whose search_path is .*: connect as role clients_svc \(the user in DATABASE_URL\) and run npm run migrate$/,
      ),
    );
    expect(code).toBe(1);
  }, 90_000);

  it('callback-svc on a schema missing a migration: names it', async () => {
    const partial = await createTestDatabase();
    try {
      await migrateAll({ NODE_ENV: 'development', DATABASE_URL: partial.url });
      const c = new pg.Client({ connectionString: partial.url });
      await c.connect();
      const last = await c.query<{ name: string }>('select max(name) as name from callbacks.kysely_migration');
      const name = last.rows[0]?.name ?? '';
      await c.query('delete from callbacks.kysely_migration where name = $1', [name]);
      await c.end();
      const { code, line } = await failedStart('callback-svc', {
        DATABASE_URL: appDatabaseUrl('callback-svc', partial.url),
      });
      expectFatal(
        line,
        'callback-svc',
        'not_migrated',
        `schema callbacks is not migrated (missing: ${name}): run npm run migrate`,
      );
      expect(code).toBe(1);
    } finally {
      await partial.drop();
    }
  }, 90_000);
});

it('gateway, a bad setting', async () => {
  const { code, line } = await failedStart('gateway', { PORT: 'abc' });
  expectFatal(line, 'gateway', 'config', 'PORT must be an integer >= 0, got "abc"');
  expect(code).toBe(1);
}, 90_000);

describe('NODE_ENV=production with the development secrets', () => {
  const dev = {
    DOWNLOAD_LINK_SECRET: 'development-download-link-secret',
    CREDENTIALS_ENCRYPTION_KEY: DEV_CREDENTIALS_ENCRYPTION_KEY,
    PROVIDER_API_KEY: 'sandbox-api-key',
    PROVIDER_WEBHOOK_SECRET: 'sandbox-webhook-secret',
    BANK_SANDBOX_API_KEY: 'sandbox-api-key',
    BANK_SANDBOX_WEBHOOK_SECRET: 'sandbox-webhook-secret',
  };
  const DEFAULT = 'is the public development default';
  const NO_BUS_USER = 'NATS_USER/NATS_PASSWORD or NATS_CREDS is missing';
  // What each app must name, all in its one refusal.
  const expected: Array<[string, string, string[]]> = [
    [
      'gateway',
      'PORT',
      [
        'JWT_PRIVATE_KEY is missing',
        `DOWNLOAD_LINK_SECRET ${DEFAULT}`,
        `CREDENTIALS_ENCRYPTION_KEY ${DEFAULT}`,
        NO_BUS_USER,
      ],
    ],
    [
      'receivables-svc',
      'RECEIVABLES_PORT',
      [
        `PROVIDER_API_KEY ${DEFAULT}`,
        `PROVIDER_WEBHOOK_SECRET ${DEFAULT}`,
        `CREDENTIALS_ENCRYPTION_KEY ${DEFAULT}`,
        `DOWNLOAD_LINK_SECRET ${DEFAULT}`,
        NO_BUS_USER,
      ],
    ],
    ['booklet-svc', 'BOOKLET_PORT', [`DOWNLOAD_LINK_SECRET ${DEFAULT}`, NO_BUS_USER]],
    ['clients-svc', 'CLIENTS_PORT', [NO_BUS_USER]],
    ['callback-svc', 'CALLBACK_PORT', [NO_BUS_USER]],
    [
      'bank-sandbox',
      'BANK_SANDBOX_PORT',
      [`BANK_SANDBOX_API_KEY ${DEFAULT}`, `BANK_SANDBOX_WEBHOOK_SECRET ${DEFAULT}`],
    ],
  ];

  it('every app exits 1 with one fatal line naming each offending variable', async () => {
    // Started together: each is refused before it connects to anything.
    const runs = await Promise.all(
      expected.map(async ([name, portVariable]) => ({
        name,
        ...(await failedStart(name, { ...dev, NODE_ENV: 'production', [portVariable]: '0' })),
      })),
    );
    for (const { name, code, line } of runs) {
      const problems = expected.find(([app]) => app === name)![2];
      expect({ name, code, level: line.level, problem: line.problem }).toEqual({
        name,
        code: 1,
        level: 60,
        problem: 'config',
      });
      expect(line).not.toHaveProperty('err');
      const msg = String(line.msg);
      expect(msg).toMatch(/^production refuses to start with missing or development secrets: /);
      expect({ name, missing: problems.filter((p) => !msg.includes(p)) }).toEqual({ name, missing: [] });
      // The refusal names secrets, never their values.
      expect(msg).not.toContain(DEV_CREDENTIALS_ENCRYPTION_KEY);
    }
  }, 120_000);

  it.each([
    ['with a trailing newline or spaces', `${DEV_CREDENTIALS_ENCRYPTION_KEY}\n`, ' development-download-link-secret '],
    [
      'without the padding, or in hex',
      DEV_CREDENTIALS_ENCRYPTION_KEY.replace(/=+$/, ''),
      Buffer.from('development-download-link-secret').toString('hex'),
    ],
  ])(
    'the gateway refuses near misses of the development secrets (%s)',
    async (_, key, linkSecret) => {
      const { code, line } = await failedStart('gateway', {
        NODE_ENV: 'production',
        PORT: '0',
        JWT_PRIVATE_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        CREDENTIALS_ENCRYPTION_KEY: key,
        DOWNLOAD_LINK_SECRET: linkSecret,
        NATS_USER: 'admin-cli',
        NATS_PASSWORD: 'development-nats-admin-cli\n',
      });
      expect({ code, problem: line.problem }).toEqual({ code: 1, problem: 'config' });
      expect(line.msg).toBe(
        `production refuses to start with missing or development secrets: DOWNLOAD_LINK_SECRET ${DEFAULT}; CREDENTIALS_ENCRYPTION_KEY ${DEFAULT}; NATS_PASSWORD ${DEFAULT}. Set them, or NODE_ENV=development on a developer machine`,
      );
    },
    90_000,
  );

  it('with secrets of its own (and its bus user), an app gets past the check', async () => {
    const port = await freePort();
    // Past the secrets, the gateway fails where a started one would: NATS out of reach.
    const { code, line } = await failedStart('gateway', {
      NODE_ENV: 'production',
      PORT: '0',
      NATS_URL: `nats://127.0.0.1:${port}`,
      JWT_PRIVATE_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      DOWNLOAD_LINK_SECRET: randomBytes(32).toString('hex'),
      CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      NATS_USER: 'gateway',
      NATS_PASSWORD: randomBytes(16).toString('hex'),
    });
    expect(line).toMatchObject({ level: 60, service: 'gateway', problem: 'unreachable' });
    expect(code).toBe(1);
  }, 90_000);
});

describe('NODE_ENV=production against a NATS server that checks no logins', () => {
  // nats-server reads a $VARIABLE's value as a config value: a password starts with a letter.
  const secret = () => `p${randomBytes(12).toString('hex')}`;
  let open: PrivateNats;
  let checking: PrivateNats;
  /** Each user's password on `checking`, by the variable deploy/nats reads it from. */
  const passwords: Record<string, string> = {};
  const password = (user: string) => passwords[`NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`];

  beforeAll(async () => {
    // The repository's own config, rendered for this prefix: each service its own user and password.
    const config = execFileSync('sh', [join(ROOT, 'deploy', 'nats', 'render.sh'), prefix], { encoding: 'utf8' });
    for (const [, variable] of config.matchAll(/\$(NATS_[A-Z_]+_PASSWORD)/g)) passwords[variable] = secret();
    [open, checking] = await Promise.all([PrivateNats.create(), PrivateNats.create({ config, env: passwords })]);
    // Provisioned as a deploy does, by the admin user: the service checks, and does not create, what it uses.
    const admin = await connect({ servers: checking.url, user: 'admin', pass: password('admin') });
    try {
      await provisionBus(admin, { prefix, maxBytes: STREAM_MAX_BYTES_DEFAULT.development, replicas: 1 });
    } finally {
      await admin.close();
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all([open?.destroy(), checking?.destroy()]);
  });

  const production = (nats: PrivateNats, user: string, pass: string) => ({
    NODE_ENV: 'production',
    CLIENTS_PORT: '0',
    NATS_URL: nats.url,
    NATS_USER: user,
    NATS_PASSWORD: pass,
    // As provisioned above: production's default is larger, and a service refuses a smaller stream.
    STREAM_MAX_BYTES: String(STREAM_MAX_BYTES_DEFAULT.development),
  });

  it('clients-svc refuses to start, naming the reason', async () => {
    const { code, line } = await failedStart('clients-svc', production(open, 'clients-svc', secret()));
    expectFatal(
      line,
      'clients-svc',
      'login_unchecked',
      `NATS at ${open.url} let user clients-svc with a wrong password in: it checks no logins, so anyone who reaches it may act as any service. Give it the users of deploy/nats (or an operator, with NATS_CREDS) before starting in production`,
    );
    expect(code).toBe(1);
  }, 90_000);

  it("clients-svc starts on deploy/nats's config, logged in as its own user", async () => {
    const run = app('clients-svc', {
      ...base,
      DATABASE_URL: appDatabaseUrl('clients-svc', base.DATABASE_URL),
      ...production(checking, 'clients-svc', password('clients-svc')),
      LOG_LEVEL: 'info',
    });
    try {
      await waitFor(
        () => run.stdout.includes('clients-svc ready') || run.child.exitCode !== null,
        60_000,
        'clients-svc to start or exit',
      );
      expect({ ready: run.stdout.includes('clients-svc ready'), output: run.output }).toMatchObject({ ready: true });
      expect(run.stdout).not.toContain('login_unchecked');
    } finally {
      run.child.kill('SIGTERM');
      await run.exit(30_000);
    }
  }, 90_000);

  describe('the same check before npm start (checkBus)', () => {
    const inProduction = (credentials: NatsCredentials): NatsCredentials => ({ nodeEnv: 'production', ...credentials });

    it('refuses an open server in production only, and passes one that checks', async () => {
      const login = { natsUser: 'admin-cli', natsPassword: secret() };
      await expect(checkBus(open.url, { credentials: inProduction(login) })).rejects.toMatchObject({
        name: 'BusUnavailableError',
        problem: 'login_unchecked',
      });
      // A developer's NATS takes any login, and that is fine there.
      await expect(checkBus(open.url, { credentials: { ...login, nodeEnv: 'development' } })).resolves.toBeUndefined();
      await expect(
        checkBus(checking.url, {
          name: 'admin-cli',
          credentials: inProduction({ natsUser: 'admin-cli', natsPassword: password('admin-cli') }),
        }),
      ).resolves.toBeUndefined();
    }, 30_000);

    it('with a creds file, tries an nkey that no account signed: an operator-mode server refuses it, an open one lets it in', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'creds-'));
      const operatorMode = operatorModeSetup();
      const file = join(dir, 'user.creds');
      await writeFile(file, operatorMode.creds);
      const operatorNats = await PrivateNats.create({ config: operatorMode.config });
      try {
        // The server checks the user's JWT and its signature: the service's creds pass, and so does the check.
        await expect(
          checkBus(operatorNats.url, { credentials: inProduction({ natsCreds: file }) }),
        ).resolves.toBeUndefined();
        // The check was made (and refused), not skipped: the server logs it (its log may come a little later).
        await waitFor(
          () => /:preflight login check" - authentication error/.test(operatorNats.output),
          5_000,
          "the server's refusal of the login check",
        );
        // A server without auth reads neither: the same creds log in, and so does a random nkey.
        const failure = await checkBus(open.url, { credentials: inProduction({ natsCreds: file }) }).catch(
          (err: Error) => err,
        );
        expect(failure).toMatchObject({ problem: 'login_unchecked' });
        expect((failure as Error).message).toContain('let an nkey that no account signed in');
      } finally {
        await operatorNats.destroy();
        await rm(dir, { recursive: true, force: true });
      }
    }, 30_000);
  });
});

/**
 * An operator-mode server of a test's own (what `nsc` makes): an operator, a system account, an account
 * with JetStream and one user of it, each JWT signed by the key above it. Returns the server's config
 * and the user's creds file.
 */
type KeyPair = ReturnType<typeof nkeys.createUser>;

function operatorModeSetup(): { config: string; creds: string } {
  const text = (key: string | Uint8Array) => (typeof key === 'string' ? key : new TextDecoder().decode(key));
  const b64url = (value: string | Uint8Array) => Buffer.from(value).toString('base64url');
  const sign = (signer: KeyPair, subject: KeyPair, name: string, nats: Record<string, unknown>) => {
    const claims: Record<string, unknown> = {
      iat: Math.floor(Date.now() / 1000),
      iss: text(signer.getPublicKey()),
      sub: text(subject.getPublicKey()),
      name,
      nats: { version: 2, ...nats },
    };
    claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('base64url');
    const unsigned = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64url(JSON.stringify(claims))}`;
    return `${unsigned}.${b64url(signer.sign(new TextEncoder().encode(unsigned)))}`;
  };
  const operator = nkeys.createOperator();
  const system = nkeys.createAccount();
  const account = nkeys.createAccount();
  const user = nkeys.createUser();
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetStream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const accounts = [
    [system, sign(operator, system, 'SYS', { type: 'account', limits: unlimited })],
    [account, sign(operator, account, 'payments', { type: 'account', limits: { ...unlimited, ...jetStream } })],
  ] as const;
  const config = [
    `operator: ${sign(operator, operator, 'operator', { type: 'operator' })}`,
    `system_account: ${text(system.getPublicKey())}`,
    'resolver: MEMORY',
    `resolver_preload: { ${accounts.map(([key, jwt]) => `${text(key.getPublicKey())}: ${jwt}`).join(', ')} }`,
  ].join('\n');
  const userJwt = sign(account, user, 'clients-svc', { type: 'user', subs: -1, data: -1, payload: -1 });
  const creds = [
    '-----BEGIN NATS USER JWT-----',
    userJwt,
    '------END NATS USER JWT------',
    '',
    '-----BEGIN USER NKEY SEED-----',
    text(user.getSeed()),
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
  return { config, creds };
}
