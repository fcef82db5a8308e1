import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { DEV_CREDENTIALS_ENCRYPTION_KEY } from '@payments/credential-seal';
import { app, deleteStreams, dropDatabase, freePort } from '../support/launcher';

/**
 * Each app run alone, as a container runs it (no npm start to check first): a failure the operator can
 * fix ends the process with exit code 1 and one `fatal` JSON log line saying what is wrong and what to
 * do, with no stack.
 */
const database = `test_appstart_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const prefix = `t${randomBytes(5).toString('hex')}`;
const base = { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`, BUS_PREFIX: prefix, LOG_LEVEL: 'warn' };

afterAll(async () => {
  await dropDatabase(database);
  await deleteStreams(prefix).catch(() => undefined);
});

/** Runs the app to its exit: the code, and its single log line (there must be exactly one). */
async function failedStart(
  name: string,
  env: Record<string, string>,
): Promise<{ code: number | null; line: Record<string, unknown> }> {
  const run = app(name, { ...base, ...env });
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
