import fc from 'fast-check';
import { compileValidator, ErrorCatalog, ProblemSchema, type AdminTenant, type Problem } from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import {
  ADMIN_FUZZED_OPERATIONS,
  ADMIN_MUTATING,
  adminFuzzCases,
  asFuzzCase,
  type AdminCase,
  type AdminWorld,
} from '../support/fuzz/admin-cases';
import { adminRefusal, type AdminRefusal } from '../support/fuzz/admin-predict';
import { failureReport, runCases, sendCase, type Answer } from '../support/fuzz/runner';
import { startSystem, type TestSystem } from '../support/system';

/*
 * docs/architecture.md, Bad input, on the admin API (ADMIN_PORT): requests generated from ADMIN_OPERATIONS'
 * schemas for every operation (valid ones, then the same with one field, header, path or query
 * parameter broken, random JSON and bytes), sent with an operator credential over HTTP. Every answer
 * is below 500; every 4xx is a problem of the catalogue, and a validation_failed names the field; a
 * request the admin API must refuse (judged independently: support/fuzz/admin-predict.ts) never gets
 * a 2xx; and at the end the tenants and the audit log have grown by exactly the 2xx changes, so no
 * refusal stored anything. Changes are destructive (disable, revoke, rotate): the system is this
 * file's own (a throw-away database and bus prefix).
 *
 * ADMIN_FUZZ_SEED (fixed by default), ADMIN_FUZZ_RUNS (requests) and ADMIN_FUZZ_BUDGET_MS (time for
 * them) replay or widen a run; a failure prints the seed and the failing requests.
 */

const SEED = Number(process.env.ADMIN_FUZZ_SEED ?? 20261126);
const RUNS = Number(process.env.ADMIN_FUZZ_RUNS ?? 5_000);
const BUDGET_MS = Number(process.env.ADMIN_FUZZ_BUDGET_MS ?? 30_000);
/** Requests in flight: enough to keep the gateway busy, few enough for a 2-core machine. */
const CONCURRENCY = 6;
/** Below this many requests the run proves little; a CI machine sends several times more in the budget. */
const MIN_REQUESTS = 500;
const VICTIMS = 4;

let system: TestSystem;
let operator: string;
let world: AdminWorld;

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    env: {
      // Off ("0"): thousands of requests a minute from one address are the point here.
      RATE_LIMIT_PER_SECOND: '0',
      RATE_LIMIT_AUTH_PER_MINUTE: '0',
      RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0',
    },
  });
  const adminDb = await openAdminDatabase(system.databaseUrl);
  try {
    operator = (await createOperator(adminDb, 'Fuzz Ops', { operator: 'test' })).credential;
    const leaving = await createOperator(adminDb, 'Revoked Ops', { operator: 'test' });
    // Revoked in the table, as `operator revoke` does: its credential must be refused from now on.
    await adminDb
      .updateTable('operators')
      .set({ revoked_at: new Date() })
      .where('id', '=', leaving.operator_id)
      .execute();
    const tenants = [];
    for (let i = 0; i < VICTIMS; i += 1) tenants.push(await system.newTenant(`Admin fuzz ${i}`));
    world = {
      tenantIds: tenants.map((t) => t.tenantId),
      tokenIds: tenants.map((t) => t.tokenId),
      foreignCredentials: {
        tenantToken: tenants[0].integrationToken,
        tenantJwt: tenants[0].accessToken,
        revokedOperator: leaving.credential,
      },
    };
  } finally {
    await adminDb.destroy();
  }
}, 120_000);

afterAll(async () => {
  await system?.stop();
});

const validProblem = compileValidator(ProblemSchema);

/** What is wrong with an answer, if anything. */
function judge(c: AdminCase, refusal: AdminRefusal | undefined, answer: Answer): string | undefined {
  if (answer.status === 0) return `no HTTP answer: ${answer.text}`;
  if (answer.status >= 500)
    return `${answer.status} for ${refusal ? `a refused request (${refusal.reason})` : 'a request the contracts accept'}`;
  if (refusal && answer.status < 300)
    return `${answer.status} for a request the admin API must refuse (${refusal.reason})`;
  if (answer.status < 400) return undefined;
  return problemFault(refusal, answer);
}

/** A 4xx must be a problem of the catalogue; a validation_failed names the refused field. */
function problemFault(refusal: AdminRefusal | undefined, answer: Answer): string | undefined {
  if (!answer.contentType.includes('application/problem+json'))
    return `${answer.status} without problem+json (${answer.contentType})`;
  let problem: Problem;
  try {
    problem = JSON.parse(answer.text) as Problem;
  } catch {
    return `${answer.status} problem is not JSON`;
  }
  const shape = validProblem(structuredClone(problem));
  if (!shape.ok) return `problem of the wrong shape: ${JSON.stringify(shape.errors)}`;
  const listed = ErrorCatalog[problem.code];
  if (problem.status !== answer.status || listed.status !== answer.status || listed.title !== problem.title)
    return `problem ${problem.code} says status ${problem.status}, title ${problem.title} on a ${answer.status}`;
  if (problem.code !== 'validation_failed') return undefined;
  const named = (problem.errors ?? []).map((e) => e.path);
  if (named.length === 0) return 'validation_failed without errors[]';
  if (refusal && refusal.fields.length > 0 && !refusal.fields.some((f) => named.includes(f)))
    return `validation_failed names ${JSON.stringify(named)}, not the refused ${JSON.stringify(refusal.fields)}`;
  // A domain rule past the schema (a provider account's) must still name its field.
  if (!refusal && named.includes('')) return `validation_failed names no field: ${problem.detail}`;
  return undefined;
}

/** An admin GET with the operator credential, its JSON answer. */
async function adminGet<T>(path: string): Promise<T> {
  const res = await fetch(system.gateway.adminUrl + path, { headers: { authorization: `Bearer ${operator}` } });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function tenantCount(): Promise<number> {
  return (await adminGet<{ items: AdminTenant[] }>('/admin/v1/tenants')).items.length;
}

interface AuditPage {
  items: unknown[];
  next_cursor: string | null;
}

/** Every entry of the audit log, page by page. */
async function auditLength(): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: AuditPage = await adminGet<AuditPage>(`/admin/v1/audit?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    count += page.items.length;
    cursor = page.next_cursor;
  } while (cursor !== null);
  return count;
}

it(
  'answers generated requests on every admin operation without a 5xx, and a refusal stores nothing',
  async () => {
    const cases = fc.sample(adminFuzzCases(world), { seed: SEED, numRuns: RUNS });
    const tenantsBefore = await tenantCount();
    const auditBefore = await auditLength();
    const changes = new Map<string, number>();
    let refused = 0;
    const credentials = { integrationToken: operator, accessToken: operator };
    const { sent, elapsed, tally, failures } = await runCases(
      cases,
      async (c) => {
        const refusal = adminRefusal(c);
        const answer = await sendCase(system.gateway.adminUrl, asFuzzCase(c), credentials);
        if (refusal) refused += 1;
        if (ADMIN_MUTATING.has(c.operationId) && answer.status >= 200 && answer.status < 300)
          changes.set(c.operationId, (changes.get(c.operationId) ?? 0) + 1);
        return { answer, problem: judge(c, refusal, answer) };
      },
      { concurrency: CONCURRENCY, budgetMs: BUDGET_MS },
    );
    const changed = [...changes.values()].reduce((a, b) => a + b, 0);

    console.log(
      `admin fuzz: ADMIN_FUZZ_SEED=${SEED}, ${sent} of ${cases.length} requests in ${elapsed} ms ` +
        `(${refused} refused by the admin API's rules; 2xx changes ${JSON.stringify(Object.fromEntries(changes))})\n` +
        tally.report(),
    );
    if (failures.length > 0)
      console.log(failureReport(failures, { label: 'admin fuzz', seedVariable: 'ADMIN_FUZZ_SEED', seed: SEED }));

    expect(
      failures.map((f) => `#${f.index} ${f.fuzzCase.operationId} ${f.fuzzCase.description}: ${f.problem}`),
    ).toEqual([]);
    // Each change answered 2xx writes one audit entry and a new tenant one row; a refusal writes neither.
    expect({ tenants: await tenantCount(), audit: await auditLength() }).toEqual({
      tenants: tenantsBefore + (changes.get('adminCreateTenant') ?? 0),
      audit: auditBefore + changed,
    });
    // The run reached the domain: tenants were created, and something else changed too.
    expect(changes.get('adminCreateTenant') ?? 0).toBeGreaterThan(0);
    expect(changed).toBeGreaterThan(changes.get('adminCreateTenant') ?? 0);
    expect(tally.operations()).toEqual([...ADMIN_FUZZED_OPERATIONS].sort());
    expect(sent).toBeGreaterThanOrEqual(Math.min(RUNS, MIN_REQUESTS));
  },
  BUDGET_MS + 120_000,
);
