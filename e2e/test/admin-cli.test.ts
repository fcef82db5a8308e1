import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSystem, type TestSystem } from '../support/system';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** Runs `npm run admin -- <args>` exactly as an operator types it (the project .npmrc keeps npm's banner out of stdout), against the test database. */
async function admin(databaseUrl: string, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', 'admin', '--', ...args], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

it('tenant create --json prints tenant_id, integration_token and signing_secret; the token authenticates; revoke stops it', async () => {
  const created = await admin(system.databaseUrl, 'tenant', 'create', '--name', 'CLI Corp', '--json');
  expect(created.code).toBe(0);
  const tenant = JSON.parse(created.stdout) as { tenant_id: string; integration_token: string; signing_secret: string; token_id: string };
  expect(tenant.tenant_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(tenant.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  expect(Buffer.from(tenant.signing_secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

  const auth = await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integration_token}` });
  expect(auth.status).toBe(200);

  const second = await admin(system.databaseUrl, 'token', 'create', '--tenant', tenant.tenant_id, '--json');
  const extra = JSON.parse(second.stdout) as { integration_token: string; token_id: string };
  expect((await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${extra.integration_token}` })).status).toBe(200);

  const revoked = await admin(system.databaseUrl, 'token', 'revoke', tenant.token_id);
  expect(revoked.code).toBe(0);
  expect((await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integration_token}` })).status).toBe(401);
  // The tenant's other token still works.
  expect((await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${extra.integration_token}` })).status).toBe(200);

  const list = await admin(system.databaseUrl, 'tenant', 'list', '--json');
  const tenants = JSON.parse(list.stdout) as Array<{ tenant_id: string; active_tokens: number }>;
  expect(tenants.find((t) => t.tenant_id === tenant.tenant_id)?.active_tokens).toBe(1);
});

it('explains its mistakes with a non-zero exit code', async () => {
  const noName = await admin(system.databaseUrl, 'tenant', 'create');
  expect(noName.code).toBe(1);
  expect(noName.stderr).toMatch(/--name/);
  const unknown = await admin(system.databaseUrl, 'frobnicate', 'now');
  expect(unknown.code).toBe(2);
  const revokeNothing = await admin(system.databaseUrl, 'token', 'revoke', 'itk_nope');
  expect(revokeNothing.code).toBe(1);
});
