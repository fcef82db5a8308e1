import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import type { HttpResponse } from '../src/transport/http/problem';
import { fingerprint, runIdempotently } from '../src/domain/idempotency/idempotency';
import { IdempotencyStore, type BeginOutcome, type LockHold, type RequestIdentity } from '../src/db/idempotency-store';

// A slow first attempt whose lock timed out, and the retry that took the key over, against a real
// Postgres: only the attempt holding the lock may complete or release the key.

let db: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;
const LOCK_TIMEOUT_MS = 300;

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

const path = '/api/v1/accounts-receivable';
const identity = (): RequestIdentity => ({
  tenantId: randomUUID(),
  key: randomUUID(),
  method: 'POST',
  path,
  fingerprint: fingerprint('POST', path, { n: 1 }),
});
const toResponse = (err: ServiceError): HttpResponse => ({ status: err.status, body: { code: err.code } });
const lockTimesOut = () => new Promise((resolve) => setTimeout(resolve, LOCK_TIMEOUT_MS + 100));

function holdOf(outcome: BeginOutcome): LockHold {
  if (outcome.kind !== 'claimed') throw new Error(`expected the key to be claimed, got ${outcome.kind}`);
  return outcome.hold;
}

async function row(id: RequestIdentity) {
  return db
    .selectFrom('idempotency_keys')
    .select(['status_code', 'response_body', 'locked_at'])
    .where('tenant_id', '=', id.tenantId)
    .where('key', '=', id.key)
    .executeTakeFirst();
}

describe('a retry that took over a timed-out lock', () => {
  it('is fenced by its token too: a hold with the same lock time and another token is stale', async () => {
    const s = new IdempotencyStore(db, 24, LOCK_TIMEOUT_MS);
    const id = identity();
    const hold = holdOf(await s.begin(id));
    const forged: LockHold = { lockedAt: hold.lockedAt, token: randomUUID() };
    await expect(s.complete(id, forged, { status: 201, body: '{}', headers: {} })).resolves.toBe('stale');
    await expect(s.release(id, forged)).resolves.toBe('stale');
    await expect(s.complete(id, hold, { status: 201, body: '{}', headers: {} })).resolves.toBe('done');
  });

  it('is not overwritten or released by the slow first attempt; the stored response is the retry’s', async () => {
    const s = new IdempotencyStore(db, 24, LOCK_TIMEOUT_MS);
    const id = identity();
    const first = holdOf(await s.begin(id));
    await lockTimesOut();
    const retry = holdOf(await s.begin(id));
    expect(first.token).not.toBeNull();
    expect(retry.token).not.toBeNull();
    expect(retry.token).not.toBe(first.token);

    // The first attempt finishes late: neither its completion nor its release changes anything.
    await expect(s.complete(id, first, { status: 201, body: '{"attempt":"first"}', headers: {} })).resolves.toBe(
      'stale',
    );
    await expect(s.release(id, first)).resolves.toBe('stale');
    expect(await row(id)).toMatchObject({ status_code: null, response_body: null, locked_at: expect.any(Date) });

    await expect(s.complete(id, retry, { status: 201, body: '{"attempt":"retry"}', headers: {} })).resolves.toBe(
      'done',
    );
    await expect(s.begin(id)).resolves.toEqual({
      kind: 'replay',
      response: { status: 201, body: '{"attempt":"retry"}', headers: {} },
    });
  });

  it('still answers the slow attempt’s client, and keeps the retry’s response, through runIdempotently', async () => {
    const s = new IdempotencyStore(db, 24, LOCK_TIMEOUT_MS);
    const id = identity();
    let finishFirst: (response: HttpResponse) => void = () => undefined;
    const firstAnswer = runIdempotently(
      s,
      id,
      () => new Promise<HttpResponse>((resolve) => (finishFirst = resolve)),
      toResponse,
    );
    await lockTimesOut();
    const retryAnswer = await runIdempotently(
      s,
      id,
      async () => ({ status: 201, body: { attempt: 'retry' } }),
      toResponse,
    );
    expect(retryAnswer).toEqual({ status: 201, body: { attempt: 'retry' } });

    finishFirst({ status: 201, body: { attempt: 'first' } });
    await expect(firstAnswer).resolves.toEqual({ status: 201, body: { attempt: 'first' } });
    await expect(s.begin(id)).resolves.toMatchObject({
      kind: 'replay',
      response: { status: 201, body: '{"attempt":"retry"}' },
    });
  });

  it('is not released by a slow first attempt that failed with a 5xx', async () => {
    const s = new IdempotencyStore(db, 24, LOCK_TIMEOUT_MS);
    const id = identity();
    let failFirst: (response: HttpResponse) => void = () => undefined;
    const firstAnswer = runIdempotently(
      s,
      id,
      () => new Promise<HttpResponse>((resolve) => (failFirst = resolve)),
      toResponse,
    );
    await lockTimesOut();
    const retry = holdOf(await s.begin(id));

    failFirst({ status: 502, body: { code: 'provider_unavailable' } });
    await expect(firstAnswer).resolves.toMatchObject({ status: 502 });
    // The retry still holds the key: a third attempt is told it is in progress, not given a fresh claim.
    await expect(s.begin(id)).resolves.toEqual({ kind: 'in_progress' });
    await expect(s.complete(id, retry, { status: 201, body: '{}', headers: {} })).resolves.toBe('done');
  });
});
