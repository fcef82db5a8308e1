import { randomUUID } from 'node:crypto';
import { tenantRows } from '../support/fuzz/domain-rows';
import { loadRegressions, regressionCase } from '../support/fuzz/regressions';
import { sendCase } from '../support/fuzz/runner';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * Every request the fuzz test (fuzz.test.ts) or an outside report found answered with a 5xx, or
 * storing something while refused, replayed as it was (support/fuzz/regressions.json): each must get
 * its 4xx problem naming the field, and the tenant that sent them must have no rows afterwards.
 */

const regressions = loadRegressions();
let system: TestSystem;
let tenant: TestTenant;

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, env: { RATE_LIMIT_PER_SECOND: '0' } });
  tenant = await system.newTenant('Fuzz regressions');
}, 90_000);

afterAll(async () => {
  await system?.stop();
});

it('keeps at least the cases reported earlier and those the fuzz found', () => {
  expect(regressions.length).toBeGreaterThanOrEqual(9);
});

it.each(regressions.map((r) => [r.name, r] as const))('%s', async (_name, regression) => {
  const c = regressionCase(regression);
  // A fresh key each run: the stored answer of an earlier run is not what is being checked.
  if (c.headers['idempotency-key']) c.headers['idempotency-key'] = `${c.headers['idempotency-key']}-${randomUUID()}`;
  const answer = await sendCase(system.gateway.url, c, tenant);
  const problem = JSON.parse(answer.text || '{}') as { code?: string; errors?: Array<{ path: string }> };
  expect({
    status: answer.status,
    problem: answer.contentType.includes('application/problem+json'),
    code: problem.code,
    path: problem.errors?.[0]?.path,
  }).toEqual({
    status: regression.expect.status,
    problem: true,
    code: regression.expect.code ?? problem.code,
    path: regression.expect.path ?? problem.errors?.[0]?.path,
  });
});

it('stored nothing for the tenant that sent them', async () => {
  expect(await tenantRows(system.databaseUrl, tenant.tenantId)).toEqual({});
});
