import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
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
