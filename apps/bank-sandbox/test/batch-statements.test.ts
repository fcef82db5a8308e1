import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ChargeResponse } from '../src';
import { SCHEMA } from '../src/db/migrations';
import { startHarness, type Harness } from './harness';

type BatchResult = { status: number; charge?: ChargeResponse; error?: { code: string } };

let h: Harness;
let client: pg.Client;

beforeAll(async () => {
  // No webhook polls while a batch is measured: the only statements are the batch's.
  h = await startHarness({ BANK_SANDBOX_WEBHOOK_POLL_MS: '600000' });
  client = new pg.Client({ connectionString: h.databaseUrl });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await h?.close();
});

function chargeBody(reference: string): Record<string, unknown> {
  return {
    kind: 'hybrid_slip',
    amount_cents: 10_000,
    issue_date: '2025-06-01',
    due_date: '2025-07-10',
    payer: { name: 'Maria da Silva', tax_id: '529.982.247-25' },
    instructions: [],
    description_lines: [],
    reference,
  };
}

async function batch(charges: unknown[]): Promise<BatchResult[]> {
  const res = await fetch(`${h.sandbox.url}/v1/charges/batch`, {
    method: 'POST',
    headers: { authorization: 'Bearer sandbox-api-key', 'content-type': 'application/json' },
    body: JSON.stringify({ charges }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: BatchResult[] }).results;
}

/** The sandbox's own count of the statements and commits it sent Postgres (its /metrics). */
async function work(): Promise<{ statements: number; commits: number }> {
  const text = await (await fetch(`${h.sandbox.url}/metrics`)).text();
  const value = (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(name))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  return { statements: value('db_statements_total'), commits: value('db_commits_total') };
}

function items(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({ idempotency_key: randomUUID(), ...chargeBody(`ar-${i}`) }));
}

it('registers a batch in one statement and one commit, new keys and replays alike, with unique our_numbers', async () => {
  await batch(items(10)); // the first create draws the numbers the next ones use
  const before = await work();
  const charges = items(41);
  const results = await batch(charges);
  const after = await work();
  expect(results.map((r) => r.status)).toEqual(new Array(41).fill(201));
  expect(after.statements - before.statements).toBe(1);
  expect(after.commits - before.commits).toBe(1);

  const replayed = await batch([...charges.slice(0, 5), ...items(2)]);
  expect(replayed.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 201, 201]);
  expect(replayed.slice(0, 5).map((r) => r.charge?.our_number)).toEqual(
    results.slice(0, 5).map((r) => r.charge?.our_number),
  );
  expect((await work()).statements - after.statements).toBe(1);

  // Postgres's own view: one row per new key, every our_number once.
  const { rows } = await client.query<{ charges: number; numbers: number }>(
    `select count(*) as charges, count(distinct our_number) as numbers from ${SCHEMA}.charges`,
  );
  expect(rows[0]).toEqual({ charges: 53, numbers: 53 });
});

it('keeps our_numbers counting across a restart: numbers held by the stopped process are skipped', async () => {
  const before = (await batch(items(3))).map((r) => Number(r.charge?.our_number));
  await h.restart({ BANK_SANDBOX_WEBHOOK_POLL_MS: '600000' });
  const after = (await batch(items(3))).map((r) => Number(r.charge?.our_number));
  expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
  expect(new Set([...before, ...after]).size).toBe(6);
});
