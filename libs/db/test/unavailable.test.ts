import { createServer } from 'node:net';
import {
  checkDatabase,
  createDatabase,
  DatabaseUnavailableError,
  displayDatabaseUrl,
  ensureDatabase,
  isDatabaseUnavailable,
} from '../src';
import { sql } from 'kysely';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

it('ensureDatabase with Postgres out of reach: one line naming the URL (password masked) and the fix', async () => {
  const port = await freePort();
  const failure = await ensureDatabase(`postgres://app:s3cret@127.0.0.1:${port}/receivables`).catch(
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(DatabaseUnavailableError);
  expect(failure).toMatchObject({
    problem: 'unreachable',
    startupProblem: true,
    message: `cannot reach PostgreSQL at postgres://app:***@127.0.0.1:${port}/receivables (connection refused): start PostgreSQL or set DATABASE_URL`,
  });
});

it('a refused login names the user problem and DATABASE_URL', async () => {
  await expect(ensureDatabase('postgres://no_such_role@127.0.0.1:5432/receivables')).rejects.toMatchObject({
    problem: 'login_refused',
    // The reason is the server's: "role ... does not exist" with trust, "password authentication failed" with passwords.
    message: expect.stringMatching(
      /^PostgreSQL at postgres:\/\/no_such_role@127\.0\.0\.1:5432\/receivables refused the login \(.+\): fix the user or password in DATABASE_URL$/,
    ),
  });
});

it('checkDatabase tells a missing database apart, and creates nothing', async () => {
  await expect(checkDatabase('postgres://postgres@127.0.0.1:5432/postgres')).resolves.toBeUndefined();
  await expect(checkDatabase('postgres://postgres@127.0.0.1:5432/no_such_database_here')).rejects.toMatchObject({
    problem: 'missing',
    message:
      'database "no_such_database_here" does not exist at postgres://postgres@127.0.0.1:5432/no_such_database_here',
  });
  await expect(checkDatabase('postgres://postgres@127.0.0.1:5432/no_such_database_here')).rejects.toBeInstanceOf(
    DatabaseUnavailableError,
  );
});

it('masks the password of the URLs it prints', () => {
  expect(displayDatabaseUrl('postgres://app:s3cret@db:5432/receivables')).toBe(
    'postgres://app:***@db:5432/receivables',
  );
  expect(displayDatabaseUrl('postgres://postgres@127.0.0.1:5432/receivables')).toBe(
    'postgres://postgres@127.0.0.1:5432/receivables',
  );
});

describe('isDatabaseUnavailable', () => {
  it('is true for what pg throws with Postgres down, stopping, starting or out of connections', async () => {
    const db = createDatabase({ url: `postgres://postgres@127.0.0.1:${await freePort()}/x`, schema: 'x' });
    try {
      const refused = await sql`select 1`.execute(db).catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
      expect(isDatabaseUnavailable(refused)).toBe(true);
    } finally {
      await db.destroy();
    }
    const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const code of ['57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08P01'])
      expect([code, isDatabaseUnavailable(pgError(code))]).toEqual([code, true]);
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'])
      expect([code, isDatabaseUnavailable(pgError(code))]).toEqual([code, true]);
    // pg and pg-pool without a code.
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
    ])
      expect([message, isDatabaseUnavailable(new Error(message))]).toEqual([message, true]);
    // One try per address of a host name (Node's happy eyeballs).
    expect(isDatabaseUnavailable(new AggregateError([pgError('ECONNREFUSED')], 'connect failed'))).toBe(true);
    expect(isDatabaseUnavailable(new DatabaseUnavailableError('unreachable', 'down', 'url'))).toBe(true);
  });

  it("is false for a query's own failure and for anything else", () => {
    const pgError = (code: string) => Object.assign(new Error('x'), { code });
    for (const code of ['23505', '42P01', '40001', '22P02', '28P01', '3D000'])
      expect([code, isDatabaseUnavailable(pgError(code))]).toEqual([code, false]);
    expect(isDatabaseUnavailable(new DatabaseUnavailableError('missing', 'no database', 'url'))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });
});
