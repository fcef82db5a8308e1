import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { NoReplyError } from '@payments/bus';
import { ServiceError } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { fingerprint, runIdempotently } from '../src/domain/idempotency/idempotency';
import { IdempotencyStore, type RequestIdentity } from '../src/db/idempotency-store';
import type { HttpResponse } from '../src/transport/http/problem';

let db: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;
const LOCK_TIMEOUT_MS = 600;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 2 });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

const store = () => new IdempotencyStore(db, 24, LOCK_TIMEOUT_MS);
const identity = (): RequestIdentity => ({
  tenantId: randomUUID(),
  key: randomUUID(),
  method: 'POST',
  path: '/api/v1/bank-slip-booklet/x',
  fingerprint: fingerprint('POST', '/api/v1/bank-slip-booklet/x', { url_callback: 'https://erp.example.com' }),
});
const toResponse = (err: ServiceError): HttpResponse => ({ status: err.status, body: { code: err.code } });
const accepted = async (): Promise<HttpResponse> => ({ status: 202, body: { ok: true } });

describe('a request whose service did not answer in time (it may still commit)', () => {
  it('keeps its key locked: a retry is 409 until the lock times out, then runs', async () => {
    const id = identity();
    const s = store();
    await expect(
      runIdempotently(s, id, () => Promise.reject(new NoReplyError('booklets')), toResponse),
    ).rejects.toBeInstanceOf(NoReplyError);

    let ran = 0;
    const retry = () =>
      runIdempotently(
        s,
        id,
        () => {
          ran += 1;
          return accepted();
        },
        toResponse,
      );
    await expect(retry()).rejects.toMatchObject({ code: 'idempotency_request_in_progress' });
    expect(ran).toBe(0);

    await new Promise((r) => setTimeout(r, LOCK_TIMEOUT_MS + 100));
    expect(await retry()).toEqual({ status: 202, body: { ok: true } });
    expect(ran).toBe(1);
  });

  it('releases the key at once after a 5xx that never reached a service', async () => {
    const id = identity();
    const s = store();
    const down = await runIdempotently(
      s,
      id,
      () => Promise.reject(new ServiceError('service_unavailable', 'the booklets service is not running')),
      toResponse,
    );
    expect(down.status).toBe(503);
    expect(await runIdempotently(s, id, accepted, toResponse)).toEqual({ status: 202, body: { ok: true } });
  });
});
