import { Writable } from 'node:stream';
import pg from 'pg';
import { createLogger, serializeError, type Logger } from '../src';

/** A logger writing into `lines`, as the apps' loggers write to stdout. */
function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('logger-test', 'info', sink), lines };
}

const CPF = '529.982.247-25';

describe('Postgres errors', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({
      connectionString: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    });
    await client.connect();
    // A temporary table lives in this session only: nothing to clean up, no clash with parallel tests.
    await client.query('create temporary table payers (cnpj_cpf text primary key, name text not null)');
    await client.query('insert into payers values ($1, $2)', [CPF, 'Maria da Silva']);
  });
  afterAll(() => client.end());

  async function failure(text: string, values: unknown[]): Promise<Error> {
    return client.query(text, values).then(
      () => {
        throw new Error(`expected ${text} to fail`);
      },
      (err: Error) => err,
    );
  }

  it('logs a unique violation with its code and constraint but without the row data of `detail`', async () => {
    const err = await failure('insert into payers values ($1, $2)', [CPF, 'Maria da Silva']);
    // What the driver hands over: the duplicate row's key, in clear.
    expect((err as { detail?: string }).detail).toContain(CPF);

    const { logger, lines } = capture();
    logger.error({ err }, 'request failed');
    logger.warn({ error: err, wrapped: 1 }, 'retrying');
    logger.error({ err: new Error('could not store the payer', { cause: err }) }, 'outbox relay failed');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).not.toContain(CPF);
    const logged = JSON.parse(lines[0]) as { err: Record<string, unknown> };
    expect(logged.err).toMatchObject({
      code: '23505',
      constraint: 'payers_pkey',
      table: 'payers',
      type: 'DatabaseError',
    });
    expect(logged.err.message).toContain('duplicate key value violates unique constraint');
    expect(logged.err).not.toHaveProperty('detail');
  });

  it('masks the value a data exception quotes in its message', async () => {
    const err = await failure('select $1::uuid', [`${CPF} Maria da Silva`]);
    expect(err.message).toContain(CPF);
    const serialized = serializeError(err) as { code: string; message: string; stack: string };
    expect(serialized.code).toBe('22P02');
    expect(serialized.message).toBe('invalid input syntax for type uuid: "[value]"');
    expect(serialized.stack).not.toContain(CPF);
  });

  it('drops row data from the errors of an AggregateError too', async () => {
    const err = await failure('insert into payers values ($1, $2)', [CPF, 'x']);
    const { logger, lines } = capture();
    logger.error({ err: new AggregateError([err], 'several failures') }, 'batch failed');
    expect(lines[0]).not.toContain(CPF);
    expect(lines[0]).toContain('23505');
  });
});

it('redacts secret fields at the top of a line and one object down', () => {
  const { logger, lines } = capture();
  logger.info(
    {
      signing_secret: 'whsec_top',
      tenant: { integration_token: 'itok_nested', client_secret: 'cs', key_pem: '-----BEGIN PRIVATE KEY-----' },
      account: { sealed_credentials: 'sealed', cert_pem: 'cert' },
      password: 'pw',
      req: { headers: { authorization: 'Bearer jwt' } },
      kept: 'visible',
    },
    'secrets',
  );
  const line = lines[0];
  for (const secret of [
    'whsec_top',
    'itok_nested',
    '"cs"',
    'BEGIN PRIVATE KEY',
    'sealed"',
    '"cert"',
    '"pw"',
    'Bearer jwt',
  ])
    expect(line).not.toContain(secret);
  expect(JSON.parse(line)).toMatchObject({
    signing_secret: '[redacted]',
    tenant: { integration_token: '[redacted]', client_secret: '[redacted]', key_pem: '[redacted]' },
    account: { sealed_credentials: '[redacted]', cert_pem: '[redacted]' },
    kept: 'visible',
  });
});

it('cuts URL query strings out of error messages and stacks', () => {
  const err = new Error('Request failed with status code 500: POST https://erp.example/hook?key=erp-secret');
  const serialized = serializeError(err) as { message: string; stack: string };
  expect(serialized.message).toBe('Request failed with status code 500: POST https://erp.example/hook?[redacted]');
  expect(serialized.stack).not.toContain('erp-secret');
});

it('leaves plain values under err alone', () => {
  expect(serializeError('a string')).toBe('a string');
  expect(serializeError(undefined)).toBeUndefined();
});
