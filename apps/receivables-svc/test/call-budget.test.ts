import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import type { Kysely } from 'kysely';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';
import { BudgetExhaustedError, PostgresCallBudget } from '../src/db/call-budget';

/**
 * The call budget shared through Postgres, on its own: many takers at once, from two budgets (two
 * instances) with pools of their own, never pass the limit in any window.
 */
let test: Awaited<ReturnType<typeof createTestDatabase>>;
const dbs: Array<Kysely<ReceivablesDatabase>> = [];

beforeAll(async () => {
  test = await createTestDatabase();
  const db = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 12 });
  dbs.push(db, createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 12 }));
  await migrateToLatest(db, SCHEMA, migrations);
}, 60_000);
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.destroy()));
  await test?.drop();
});

it('80 takers at once on two instances stay within 20 calls in any 2 s', async () => {
  const limit = { calls: 20, windowMs: 2_000 };
  const [a, b] = dbs.map((db) => new PostgresCallBudget(db, 20_000));
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: 80 }, async (_, i) => {
      await (i % 2 === 0 ? a : b).take('bank-account', 'list', limit);
      times.push(Date.now());
    }),
  );
  times.sort((x, y) => x - y);
  for (const start of times)
    expect(times.filter((t) => t >= start && t < start + 2_000).length).toBeLessThanOrEqual(20);
});

it('a wait beyond the bound is refused at once, and a block is waited out by every instance', async () => {
  const limit = { calls: 5, windowMs: 60_000 };
  const [a, b] = dbs.map((db) => new PostgresCallBudget(db, 1_000));
  await a.block('other-account', 'create', new Date(Date.now() + 600), limit);
  const started = Date.now();
  await b.take('other-account', 'create', limit);
  expect(Date.now() - started).toBeGreaterThanOrEqual(550);
  await a.block('other-account', 'create', new Date(Date.now() + 30_000), limit);
  await expect(b.take('other-account', 'create', limit)).rejects.toBeInstanceOf(BudgetExhaustedError);
});
