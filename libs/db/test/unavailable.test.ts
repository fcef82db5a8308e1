import { createServer } from 'node:net';
import { checkDatabase, DatabaseUnavailableError, displayDatabaseUrl, ensureDatabase } from '../src';

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
