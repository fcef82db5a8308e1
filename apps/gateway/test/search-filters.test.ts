import { randomUUID } from 'node:crypto';
import { Subjects, type ReceivablesSearchCommand } from '@payments/contracts';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest as start, type GatewayUnderTest as Running } from './support/gateway-under-test';

/*
 * The search's optional filters at the gateway (docs/api.md, "Search"): a bad value is a 422 naming
 * its field and nothing reaches receivables-svc; a good one travels to it as sent, beside the spec's
 * fields, and nothing else of the body does.
 */

let running: Running;
let jwt: string;
const asked: ReceivablesSearchCommand[] = [];
/** Whether the stand-in answers as a receivables-svc that applies the filters (an older one does not say so). */
let applies = true;

beforeAll(async () => {
  running = await start();
  const receivables = await running.standIn('receivables-stand-in');
  receivables.serve(
    Subjects.receivables.search,
    async (cmd) => {
      asked.push(cmd);
      return applies ? { items: [], next_cursor: null, filters_applied: true } : { items: [], next_cursor: null };
    },
    { queue: 'receivables-svc' },
  );
  await receivables.connection.flush();
  const tenant = await createTenant(running.db, `Tenant ${randomUUID().slice(0, 8)}`);
  const res = await fetch(`${running.gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  jwt = ((await res.json()) as { access_token: string }).access_token;
});

afterAll(async () => {
  await running?.stop();
});

const SPEC = { state: 'all', start_date: '2026-01-01', end_date: '2026-12-31' };

function search(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${running.gateway.url}/api/v1/accounts-receivable/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...SPEC, ...body }),
  });
}

interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

it.each<[string, Record<string, unknown>, string]>([
  ['a payer name of 2 characters', { payer_name: 'Jo' }, '/payer_name'],
  ['a blank payer name', { payer_name: '    ' }, '/payer_name'],
  ['a payer name of 101 characters', { payer_name: 'a'.repeat(101) }, '/payer_name'],
  ['a payer name that is a number', { payer_name: 12345 }, '/payer_name'],
  ['a tax id of 10 digits', { payer_tax_id: '5299822472' }, '/payer_tax_id'],
  ['a CPF with a wrong check digit', { payer_tax_id: '529.982.247-26' }, '/payer_tax_id'],
  ['a tax id with letters of a name', { payer_tax_id: 'Maria' }, '/payer_tax_id'],
  ['an empty our_number', { our_number: '' }, '/our_number'],
  ['an our_number with a space', { our_number: '123 456' }, '/our_number'],
  ['an our_number of 41 characters', { our_number: '1'.repeat(41) }, '/our_number'],
  ['a value with 3 decimals', { value: 10.005 }, '/value'],
  ['a value of zero', { value: 0 }, '/value'],
  ['a negative value', { value: -5 }, '/value'],
  ['a value in a string', { value: '10.00' }, '/value'],
])('refuses %s with 422 naming the field, asking nothing of receivables-svc', async (_what, body, path) => {
  const before = asked.length;
  const res = await search(body);
  expect(res.status).toBe(422);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await res.json()) as Problem;
  expect(problem.code).toBe('validation_failed');
  expect(problem.errors?.map((e) => e.path)).toEqual([path]);
  expect(asked.length).toBe(before);
});

it('passes valid filters to receivables-svc as sent, and only the filters', async () => {
  const filters = { payer_name: 'Conceição', payer_tax_id: '529.982.247-25', our_number: '00000000042', value: 1234.5 };
  const res = await search({ ...filters, limit: 10 });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual([]);
  expect(asked.at(-1)).toMatchObject({ query: { ...SPEC, ...filters }, limit: 10 });
  expect(Object.keys(asked.at(-1)?.query ?? {}).sort()).toEqual(
    ['end_date', 'our_number', 'payer_name', 'payer_tax_id', 'start_date', 'state', 'value'].sort(),
  );
});

it('answers 503 with Retry-After when receivables-svc does not apply the filters (an older release), not its unfiltered page', async () => {
  applies = false;
  try {
    const filtered = await search({ payer_name: 'Conceição' });
    expect(filtered.status).toBe(503);
    expect(filtered.headers.get('retry-after')).toBe('5');
    expect(((await filtered.json()) as Problem).code).toBe('service_unavailable');
    // The spec's own search needs nothing new of it.
    expect((await search({})).status).toBe(200);
  } finally {
    applies = true;
  }
});

it('takes a CNPJ bare or punctuated, and the spec body alone as before', async () => {
  for (const body of [{ payer_tax_id: '11222333000181' }, { payer_tax_id: '11.222.333/0001-81' }, {}])
    expect((await search(body)).status).toBe(200);
  expect(asked.at(-1)?.query).toEqual(SPEC);
});
