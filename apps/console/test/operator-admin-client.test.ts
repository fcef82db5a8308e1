import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError, GatewayUnreachableError } from '../src/gateway/problem';
import { adminClient, AdminApiError, expectData } from '../src/operator/admin-client';

/**
 * The admin client against a stand-in of the admin port (a plain HTTP server answering what the
 * gateway answers): what it sends, and how each kind of failure reaches a page as a problem.
 */
let server: Server;
let baseUrl: string;
const seen: Array<{ method: string; url: string; authorization: string | undefined; body: string }> = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => (seen.length = 0));

function json(status: number, body: unknown, type = 'application/json') {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': type });
    res.end(JSON.stringify(body));
  };
}

it('sends the credential as a bearer token, path parameters and bodies as typed, and answers the data', async () => {
  const tenant = {
    tenant_id: '7b0f3c8e-2d1a-4c55-9f6e-0a1b2c3d4e5f',
    name: 'Acme',
    token_id: '8c1f3c8e-2d1a-4c55-9f6e-0a1b2c3d4e5f',
    integration_token: 'itk_x',
    signing_secret: 'whsec_y',
  };
  answer = json(201, tenant);
  const api = adminClient({ baseUrl: `${baseUrl}/`, credential: 'opk_secret' });
  const created = await expectData('create tenant', api.POST('/admin/v1/tenants', { body: { name: 'Acme' } }));
  expect(created).toEqual(tenant);
  answer = json(200, { tenant_id: tenant.tenant_id, status: 'disabled' });
  await expectData(
    'disable',
    api.POST('/admin/v1/tenants/{tenant_id}/disable', { params: { path: { tenant_id: tenant.tenant_id } } }),
  );
  answer = json(200, { items: [] });
  await expectData('audit', api.GET('/admin/v1/audit', { params: { query: { cursor: '42', limit: 50 } } }));
  expect(seen).toEqual([
    { method: 'POST', url: '/admin/v1/tenants', authorization: 'Bearer opk_secret', body: '{"name":"Acme"}' },
    {
      method: 'POST',
      url: `/admin/v1/tenants/${tenant.tenant_id}/disable`,
      authorization: 'Bearer opk_secret',
      body: '',
    },
    { method: 'GET', url: '/admin/v1/audit?cursor=42&limit=50', authorization: 'Bearer opk_secret', body: '' },
  ]);
});

it("a refusal is an AdminApiError carrying the gateway's problem document", async () => {
  const problem = {
    type: 'https://payments.example/problems/validation_failed',
    title: 'Unprocessable Content',
    status: 422,
    detail: 'name is missing',
    code: 'validation_failed',
    errors: [{ path: '/name', message: 'must have at least 1 character' }],
  };
  answer = json(422, problem, 'application/problem+json');
  const api = adminClient({ baseUrl, credential: 'opk_secret' });
  const err = await expectData('create tenant', api.POST('/admin/v1/tenants', { body: { name: '' } })).catch(
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdminApiError);
  expect((err as AdminApiError).status).toBe(422);
  expect((err as AdminApiError).problem).toEqual(problem);
  expect((err as AdminApiError).message).toBe('create tenant: 422 Unprocessable Content: name is missing');
  // The console's error handler renders GatewayErrors as the problem page.
  expect(err).toBeInstanceOf(GatewayError);
});

it('an answer without a problem document (a proxy) still becomes a problem with its status', async () => {
  answer = (_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end('<html>bad gateway</html>');
  };
  const api = adminClient({ baseUrl, credential: 'opk_secret' });
  const err = (await expectData('list', api.GET('/admin/v1/tenants')).catch((e: unknown) => e)) as AdminApiError;
  expect(err.problem).toMatchObject({ status: 502, code: 'service_unavailable' });
  expect(err.problem.detail).toContain('without a problem document');
});

it('a gateway out of reach or too slow is a 502 problem, not a crash', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const gone = adminClient({ baseUrl: `http://127.0.0.1:${port}`, credential: 'opk_secret' });
  const unreachable = await expectData('list', gone.GET('/admin/v1/tenants')).catch((e: unknown) => e);
  expect(unreachable).toBeInstanceOf(GatewayUnreachableError);
  expect((unreachable as GatewayUnreachableError).problem).toMatchObject({
    status: 502,
    detail: 'the admin API is out of reach',
  });

  answer = () => undefined; // never answers
  const slow = adminClient({ baseUrl, credential: 'opk_secret', gatewayTimeoutMs: 200 });
  const timedOut = await expectData('list', slow.GET('/admin/v1/tenants')).catch((e: unknown) => e);
  expect(timedOut).toBeInstanceOf(GatewayUnreachableError);
  expect((timedOut as GatewayUnreachableError).problem).toMatchObject({
    status: 502,
    detail: 'the admin API did not answer in time',
  });
});
