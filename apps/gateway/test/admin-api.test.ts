import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { headers as natsHeaders } from 'nats';
import {
  ADMIN_OPENAPI_DOCUMENT_PATH,
  CONSOLE_SESSION_OPERATIONS,
  DeadLetterHeaders,
  DeadLetterStream,
  OPENAPI_DOCUMENT_PATH,
  PROBLEM_CONTENT_TYPE,
  Streams,
  type OpenApiDocument,
  type StreamSpec,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { createOperator } from '../src/domain/tenancy/operators';
import { loadGatewayConfig } from '../src/config';
import type { GatewayDatabase } from '../src/db/schema';
import type { RunningGateway } from '../src/server';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';
import { call, type Answer } from './support/http';

/*
 * The admin API against the real gateway, Postgres and NATS: operators made by the admin
 * CLI, every route, the audit it writes under the operator's name, the separation from the public
 * API both ways, and bad input refused naming the field with nothing stored.
 */

const silent = createLogger('test', 'silent');
const ROOT = join(__dirname, '../../..');
let running: GatewayUnderTest;
let gateway: RunningGateway;
let db: Kysely<GatewayDatabase>;
let databaseUrl: string;
let prefix: string;
/** The credential `operator create` printed. */
let credential: string;

beforeAll(async () => {
  running = await startGatewayUnderTest();
  ({ gateway, db, databaseUrl, prefix } = running);
});

afterAll(async () => {
  await running?.stop();
});

/* Helpers ----------------------------------------------------------------------------------------- */

/** A bank client as a pix account takes it (only the PEM shapes are checked). */
const PIX_CLIENT = {
  client_id: 'pix-client',
  client_secret: 'pix-secret',
  cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  key_pem: '-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n',
};

const admin = (method: string, path: string, body?: unknown, auth: string | undefined = credential) =>
  call(gateway.adminUrl, method, path, auth, body);

async function auditRows() {
  return db.selectFrom('admin_audit').selectAll().orderBy('id').execute();
}

async function runCli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    join(ROOT, 'node_modules/.bin/tsx'),
    [join(ROOT, 'apps/gateway/src/transport/cli/cli.ts'), ...args],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, ADMIN_OPERATOR: 'root-shell', NODE_ENV: '' } },
  );
  return stdout;
}

/** The admin CLI run on this test's bus too, answered whatever its exit code. */
async function runCliOnBus(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'apps/gateway/src/transport/cli/cli.ts'), ...args],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          BUS_PREFIX: prefix,
          ADMIN_OPERATOR: 'root-shell',
          NODE_ENV: '',
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/* Configuration --------------------------------------------------------------------------------- */

it('puts the admin API on ADMIN_PORT: PORT + 600 by default, any free port with PORT=0, never PORT itself', () => {
  const adminPortOf = (env: Record<string, string>) => loadGatewayConfig({ LOG_LEVEL: 'silent', ...env }).adminPort;
  expect(adminPortOf({})).toBe(3600);
  expect(adminPortOf({ PORT: '13000' })).toBe(13600);
  expect(adminPortOf({ PORT: '0' })).toBe(0);
  expect(adminPortOf({ PORT: '65000' })).toBe(0);
  expect(adminPortOf({ PORT: '13000', ADMIN_PORT: '9000' })).toBe(9000);
  expect(() => adminPortOf({ PORT: '4000', ADMIN_PORT: '4000' })).toThrow(/ADMIN_PORT must differ from PORT/);
});

/* Operators ------------------------------------------------------------------------------------- */

it('operator create (the admin CLI) prints a credential once; list shows its hint only; both audited', async () => {
  const created = JSON.parse(await runCli('operator', 'create', '--name', 'Ana Ops', '--json')) as {
    operator_id: string;
    name: string;
    credential: string;
  };
  expect(created.name).toBe('Ana Ops');
  expect(created.credential).toMatch(/^opk_[A-Za-z0-9_-]{43}$/);
  credential = created.credential;

  const listed = await runCli('operator', 'list', '--json');
  expect(listed).toContain(created.operator_id);
  expect(listed).not.toContain(created.credential);
  const stored = await db.selectFrom('operators').selectAll().execute();
  expect(stored).toHaveLength(1);
  expect(JSON.stringify(stored)).not.toContain(created.credential.slice(10));
  expect((await auditRows()).map((r) => [r.operator, r.action])).toEqual([['root-shell', 'operator.create']]);

  // Another with the same name while the first is active: refused.
  await expect(runCli('operator', 'create', '--name', 'Ana Ops', '--json')).rejects.toMatchObject({ code: 1 });
}, 30_000);

/* The admin port and the public port -------------------------------------------------------------- */

it('serves the admin API on its own port only, described by a document of its own', async () => {
  expect(gateway.adminPort).not.toBe(gateway.port);
  expect(gateway.adminPort).toBeGreaterThan(0);
  // Not on the public port, with or without a credential.
  const publicTry = await call(gateway.url, 'GET', '/admin/v1/tenants', credential);
  expect(publicTry.status).toBe(404);
  expect(publicTry.type).toContain(PROBLEM_CONTENT_TYPE);
  expect(gateway.routes.some((r) => r.path.startsWith('/admin'))).toBe(false);
  const publicDoc = (await call(gateway.url, 'GET', OPENAPI_DOCUMENT_PATH)).json as OpenApiDocument;
  expect(Object.keys(publicDoc.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
  // Nor the public API on the admin port.
  expect((await admin('GET', '/api/v1/callbacks')).status).toBe(404);

  // The admin document lists exactly the admin routes served, and nothing else.
  const doc = (await call(gateway.adminUrl, 'GET', ADMIN_OPENAPI_DOCUMENT_PATH)).json as OpenApiDocument;
  expect(doc.openapi).toMatch(/^3\.1\./);
  const documented = Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`))
    .sort();
  const served = gateway.adminRoutes
    .filter((r) => r.path !== ADMIN_OPENAPI_DOCUMENT_PATH)
    .map((r) => `${r.method} ${r.path}`)
    .sort();
  expect(documented).toEqual(served);
  expect(served.length).toBe(18 + CONSOLE_SESSION_OPERATIONS.length);
  // Every $ref resolves: the document hangs together.
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
  expect(refs.length).toBeGreaterThan(10);
  for (const name of refs) expect(Object.keys(doc.components.schemas)).toContain(name);
  // Console sessions and people take a session too, or nothing (sign-in, an invitation by its token).
  const consoleOperations = new Set(CONSOLE_SESSION_OPERATIONS.map((op) => op.operationId));
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item))
      if (!consoleOperations.has(op!.operationId)) expect(op!.security).toEqual([{ operatorCredential: [] }]);
});

it('refuses tenant tokens, tenant JWTs, unknown and revoked credentials on admin routes; operator credentials on the public API', async () => {
  const tenant = (await admin('POST', '/admin/v1/tenants', { name: 'Separation ERP' })).json;
  const jwt = (await call(gateway.url, 'POST', '/api/v1/authenticate', tenant.integration_token)).json.access_token;
  expect(typeof jwt).toBe('string');
  // The JWT passes the public API's guard (no callback-svc runs here, hence no 200).
  expect((await call(gateway.url, 'GET', '/api/v1/callbacks', jwt)).status).not.toBe(401);

  // '' sends no Authorization header at all.
  for (const auth of ['', tenant.integration_token, jwt, `opk_${randomBytes(32).toString('base64url')}`]) {
    const refused = await admin('GET', '/admin/v1/tenants', undefined, auth);
    expect(refused.status).toBe(401);
    expect(refused.type).toContain(PROBLEM_CONTENT_TYPE);
    expect(refused.json.code).toBe('unauthorized');
  }
  // A mutating call with a tenant JWT stores nothing.
  const before = (await auditRows()).length;
  expect((await admin('POST', '/admin/v1/tenants', { name: 'By a tenant' }, jwt)).status).toBe(401);
  expect((await auditRows()).length).toBe(before);

  // The operator credential is no key to the public API.
  const onPublic = await call(gateway.url, 'GET', '/api/v1/callbacks', credential);
  expect(onPublic.status).toBe(401);
  expect(onPublic.json.detail).toMatch(/operator credential/);
  expect((await call(gateway.url, 'POST', '/api/v1/authenticate', credential)).status).toBe(401);

  // A revoked operator is refused from the next request on.
  const other = await createOperator(db, 'Short-lived', { operator: 'test' });
  expect((await admin('GET', '/admin/v1/tenants', undefined, other.credential)).status).toBe(200);
  await runCli('operator', 'revoke', other.operator_id);
  expect((await admin('GET', '/admin/v1/tenants', undefined, other.credential)).status).toBe(401);
}, 30_000);

/* Every route ----------------------------------------------------------------------------------- */

it('runs the tenant routes, answers secrets once, and audits each change under the operator', async () => {
  const start = (await auditRows()).length;
  const created = await admin('POST', '/admin/v1/tenants', { name: 'Acme ERP' });
  expect(created.status).toBe(201);
  const t = created.json;
  expect(t).toMatchObject({ name: 'Acme ERP' });
  expect(t.integration_token).toMatch(/^itk_/);
  expect(t.signing_secret).toMatch(/^whsec_/);
  const id: string = t.tenant_id;

  const list = await admin('GET', '/admin/v1/tenants');
  expect(list.status).toBe(200);
  expect(list.json.items).toContainEqual(
    expect.objectContaining({ tenant_id: id, status: 'active', active_tokens: 1 }),
  );
  expect(list.text).not.toContain(t.integration_token);
  expect(list.text).not.toContain(t.signing_secret);

  const issued = await admin('POST', `/admin/v1/tenants/${id}/tokens`);
  expect(issued.status).toBe(201);
  expect(issued.json.integration_token).toMatch(/^itk_/);
  const tokens = await admin('GET', `/admin/v1/tenants/${id}/tokens`);
  expect(tokens.json.items.map((r: { token_id: string }) => r.token_id)).toEqual([t.token_id, issued.json.token_id]);
  expect(tokens.text).not.toContain(issued.json.integration_token);
  const revoked = await admin('POST', `/admin/v1/tokens/${issued.json.token_id}/revoke`);
  expect(revoked.json).toEqual({ tenant_id: id, token_id: issued.json.token_id, revoked: true });
  expect((await call(gateway.url, 'POST', '/api/v1/authenticate', issued.json.integration_token)).status).toBe(401);
  expect((await admin('POST', `/admin/v1/tokens/${issued.json.token_id}/revoke`)).status).toBe(404);

  // Development: a sandbox account at once; set another beneficiary.
  expect((await admin('GET', `/admin/v1/tenants/${id}/provider-account`)).json.provider).toBe('sandbox');
  const set = await admin('PUT', `/admin/v1/tenants/${id}/provider-account`, {
    provider: 'sandbox',
    beneficiary: { name: 'Acme Ltda', tax_id: '11.222.333/0001-81', city: 'Recife' },
  });
  expect(set.status).toBe(200);
  expect(set.json).toMatchObject({ provider: 'sandbox', credentials: 'none', beneficiary: { name: 'Acme Ltda' } });
  expect((await admin('GET', `/admin/v1/tenants/${id}/provider-account`)).json.account_id).toBe(set.json.account_id);

  // A pix account: base_url is its PIX API root, credentials.token_url where its tokens come from.
  const pix = await admin('PUT', `/admin/v1/tenants/${id}/provider-account`, {
    provider: 'pix',
    beneficiary: { name: 'Acme Ltda', tax_id: '11.222.333/0001-81', pix_key: 'pix@acme.example' },
    base_url: 'http://127.0.0.1:3101/pix/v2/',
    credentials: { ...PIX_CLIENT, token_url: 'http://127.0.0.1:3101/pix/oauth/token' },
  });
  expect(pix.status).toBe(200);
  expect(pix.json).toMatchObject({
    provider: 'pix',
    base_url: 'http://127.0.0.1:3101/pix/v2',
    credentials: 'set',
    beneficiary: { pix_key: 'pix@acme.example' },
  });
  expect(pix.text).not.toContain('pix-secret');

  const rotated = await admin('POST', `/admin/v1/tenants/${id}/signing-secret/rotate`, { overlap_hours: 1 });
  expect(rotated.status).toBe(200);
  expect(rotated.json.signing_secret).toMatch(/^whsec_/);
  expect(rotated.json.signing_secret).not.toBe(t.signing_secret);
  expect(Date.parse(rotated.json.previous_valid_until)).toBeGreaterThan(Date.now() + 50 * 60_000);

  expect((await admin('POST', `/admin/v1/tenants/${id}/disable`)).json).toEqual({ tenant_id: id, status: 'disabled' });
  expect((await call(gateway.url, 'POST', '/api/v1/authenticate', t.integration_token)).status).toBe(401);
  expect((await admin('POST', `/admin/v1/tenants/${id}/tokens`)).status).toBe(409);
  expect((await admin('POST', `/admin/v1/tenants/${id}/disable`)).status).toBe(404);

  const audit = (await auditRows()).slice(start);
  expect(audit.map((r) => [r.operator, r.action, r.tenant_id])).toEqual([
    ['Ana Ops', 'tenant.create', id],
    ['Ana Ops', 'token.create', id],
    ['Ana Ops', 'token.revoke', id],
    ['Ana Ops', 'tenant.account', id],
    ['Ana Ops', 'tenant.account', id],
    ['Ana Ops', 'tenant.rotate-secret', id],
    ['Ana Ops', 'tenant.disable', id],
  ]);
  // Never a secret in the audit.
  const text = JSON.stringify(audit);
  for (const secret of [
    t.integration_token,
    t.signing_secret,
    issued.json.integration_token,
    rotated.json.signing_secret,
    PIX_CLIENT.client_secret,
  ])
    expect(text).not.toContain(secret);
}, 30_000);

it('pages the audit newest first by cursor, of one tenant or of all', async () => {
  const a = (await admin('POST', '/admin/v1/tenants', { name: 'Audit A' })).json.tenant_id as string;
  await admin('POST', `/admin/v1/tenants/${a}/tokens`);
  await admin('POST', `/admin/v1/tenants/${a}/disable`);
  const all = (await auditRows()).map((r) => Number(r.id)).reverse();

  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Answer = await admin('GET', `/admin/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    expect(page.json.items.length).toBeLessThanOrEqual(2);
    seen.push(...page.json.items.map((e: { id: number }) => e.id));
    cursor = page.json.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 100);
  expect(seen).toEqual(all);

  const mine = await admin('GET', `/admin/v1/audit?tenant_id=${a}`);
  expect(mine.json.items.map((e: { action: string }) => e.action)).toEqual([
    'tenant.disable',
    'token.create',
    'tenant.create',
  ]);
  expect(mine.json.items.every((e: { operator: string }) => e.operator === 'Ana Ops')).toBe(true);
  expect(mine.json.next_cursor).toBeNull();
});

it('filters the audit by action (or group), operator and time, and pages the filtered rows', async () => {
  const b = (await admin('POST', '/admin/v1/tenants', { name: 'Audit B' })).json.tenant_id as string;
  const issued = (await admin('POST', `/admin/v1/tenants/${b}/tokens`)).json.token_id as string;
  await admin('POST', `/admin/v1/tokens/${issued}/revoke`);
  await runCli('token', 'create', '--tenant', b);
  const rows = await db.selectFrom('admin_audit').selectAll().where('tenant_id', '=', b).orderBy('id').execute();
  expect(rows.map((r) => [r.operator, r.action])).toEqual([
    ['Ana Ops', 'tenant.create'],
    ['Ana Ops', 'token.create'],
    ['Ana Ops', 'token.revoke'],
    ['root-shell', 'token.create'],
  ]);
  const ids = (answer: Answer) => answer.json.items.map((e: { id: number }) => e.id);
  const idOf = (i: number) => Number(rows[i]!.id);
  const get = (query: string) => admin('GET', `/admin/v1/audit?tenant_id=${b}&${query}`);

  expect(ids(await get('action=token.create'))).toEqual([idOf(3), idOf(1)]);
  expect(ids(await get('action=token.'))).toEqual([idOf(3), idOf(2), idOf(1)]);
  expect(ids(await get('operator=ROOT-SHELL'))).toEqual([idOf(3)]);
  expect(ids(await get('operator=Ana%20Ops&action=token.create'))).toEqual([idOf(1)]);
  // since is inclusive, until exclusive: the window of the second and third rows.
  const since = encodeURIComponent(rows[1]!.at.toISOString());
  const until = encodeURIComponent(rows[3]!.at.toISOString());
  if (rows[2]!.at < rows[3]!.at) expect(ids(await get(`since=${since}&until=${until}`))).toEqual([idOf(2), idOf(1)]);
  expect(ids(await get(`until=${encodeURIComponent(rows[0]!.at.toISOString())}`))).toEqual([]);
  expect(ids(await get('since=2000-01-01T00:00:00-03:00'))).toHaveLength(4);

  // A filtered page's cursor keeps to the filter.
  const first = await get('action=token.&limit=2');
  expect(ids(first)).toEqual([idOf(3), idOf(2)]);
  const second = await get(`action=token.&limit=2&cursor=${first.json.next_cursor}`);
  expect(ids(second)).toEqual([idOf(1)]);
  expect(second.json.next_cursor).toBeNull();
}, 30_000);

it('lists dead-lettered jobs and redrives one, audited', async () => {
  // A job stream of the registry (only those are re-driven), provisioned with the gateway, with a
  // worker of the test's own on its durable consumer.
  const spec = {
    ...Streams.bookletBuilds,
    messageSchema: Type.Object({ n: Type.Integer() }),
  } as const satisfies StreamSpec;
  type Registry = { requests: Record<string, never>; streams: { 'booklets.build': { n: number } } };
  const worker: Bus<Registry> = await connectBus<Registry>({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix,
    name: 'admin-jobs-test',
    logger: silent,
    streamSettings: { jobMaxFailures: 1, jobFailureBackoffMs: 20 },
  });
  try {
    await worker.streams.provision(spec);
    const consumption = await worker.streams.consumeEach(spec, async () => {
      throw new Error('always fails');
    });
    await worker.streams.publish(spec, { n: 1 }, 'admin-job-1');
    let listed: Answer | undefined;
    for (let i = 0; i < 200; i++) {
      listed = await admin('GET', '/admin/v1/dead-letters?limit=10');
      if (listed.json.items.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await consumption.stop();
    expect(listed!.status).toBe(200);
    const [dead] = listed!.json.items;
    expect(dead).toMatchObject({ stream: `${prefix}_booklets`, msg_id: 'admin-job-1', error: 'always fails' });

    const before = (await auditRows()).length;
    const redriven = await admin('POST', `/admin/v1/dead-letters/${dead.id}/redrive`);
    expect(redriven.status).toBe(200);
    expect(redriven.json).toMatchObject({ id: dead.id, msg_id: `admin-job-1:redrive:${dead.id}`, duplicate: false });
    expect((await admin('GET', '/admin/v1/dead-letters')).json.items).toEqual([]);
    expect((await admin('POST', `/admin/v1/dead-letters/${dead.id}/redrive`)).status).toBe(404);
    const audit = (await auditRows()).slice(before);
    expect(audit.map((r) => [r.operator, r.action, r.details.dead_letter_id])).toEqual([
      ['Ana Ops', 'jobs.redrive', dead.id],
    ]);
  } finally {
    const jsm = await worker.connection.jetstreamManager();
    for (const name of ['booklets', 'dead_letters'])
      await jsm.streams.delete(`${prefix}_${name}`).catch(() => undefined);
    await worker.close();
  }
}, 30_000);

it('refuses to redrive a forged dead letter: 422 redrive_refused, nothing published, the refusal audited', async () => {
  const forger = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix,
    name: 'admin-forger-test',
    logger: silent,
  });
  // A dead letter's headers are whatever its publisher wrote: one names the cancellation job subject
  // of another deployment's prefix (another tenant's charges), one an arbitrary subject of this bus.
  const forged = [
    {
      stream: `${prefix}_${Streams.receivableCancellations.name}`,
      subject: `other.${Streams.receivableCancellations.subject}`,
    },
    { stream: `${prefix}_${Streams.receivableCancellations.name}`, subject: `${prefix}.anything.at.all` },
  ];
  const heard: string[] = [];
  const listeners = [...forged.map((f) => f.subject), `${prefix}.${Streams.receivableCancellations.subject}`].map(
    (subject) => forger.connection.subscribe(subject, { callback: (_err, m) => heard.push(m.subject) }),
  );
  try {
    await forger.streams.provision();
    await forger.connection.flush();
    const ids: number[] = [];
    for (const [i, f] of forged.entries()) {
      const h = natsHeaders();
      h.set(DeadLetterHeaders.stream, f.stream);
      h.set(DeadLetterHeaders.subject, f.subject);
      h.set(DeadLetterHeaders.msgId, `forged-${i}`);
      const body = JSON.stringify({ tenant_id: randomUUID(), receivable_id: randomUUID(), reason: 'requested' });
      const ack = await forger.connection
        .jetstream()
        .publish(`${prefix}.${DeadLetterStream.subject}`, Buffer.from(body), { headers: h });
      ids.push(ack.seq);
    }

    const before = (await auditRows()).length;
    for (const [i, f] of forged.entries()) {
      const refused = await admin('POST', `/admin/v1/dead-letters/${ids[i]}/redrive`);
      expect(refused.status).toBe(422);
      expect(refused.type).toContain(PROBLEM_CONTENT_TYPE);
      expect(refused.json).toMatchObject({ code: 'redrive_refused', status: 422 });
      expect(refused.json.detail).toContain(f.subject);
    }
    await forger.connection.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);
    // Still listed, for an operator to look into.
    const listed = (await admin('GET', '/admin/v1/dead-letters')).json.items.map((d: { id: number }) => d.id);
    expect(listed).toEqual(expect.arrayContaining(ids));
    // The admin CLI refuses it too, saying why, and exits 1.
    const cli = await runCliOnBus('jobs', 'redrive', String(ids[0]));
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`dead letter ${ids[0]} was not re-driven`);
    expect(cli.stderr).toContain(forged[0].subject);
    await forger.connection.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);

    const audit = (await auditRows()).slice(before);
    const refusal = (i: number) => ({
      dead_letter_id: ids[i],
      stream: forged[i].stream,
      subject: forged[i].subject,
      msg_id: `forged-${i}`,
    });
    expect(audit.map((r) => [r.operator, r.action, r.details])).toEqual([
      ['Ana Ops', 'jobs.redrive-refused', refusal(0)],
      ['Ana Ops', 'jobs.redrive-refused', refusal(1)],
      ['root-shell', 'jobs.redrive-refused', refusal(0)],
    ]);
  } finally {
    listeners.forEach((l) => l.unsubscribe());
    const jsm = await forger.connection.jetstreamManager();
    await jsm.streams.delete(`${prefix}_dead_letters`).catch(() => undefined);
    await forger.close();
  }
}, 30_000);

it('pages the dead letters, shows one with its payload, and discards one, audited and published nowhere', async () => {
  const publisher = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix,
    name: 'admin-discard-test',
    logger: silent,
  });
  const jobSubject = `${prefix}.${Streams.bookletBuilds.subject}`;
  const heard: string[] = [];
  const listener = publisher.connection.subscribe(jobSubject, { callback: (_err, m) => heard.push(m.subject) });
  try {
    await publisher.streams.provision();
    const bodies = [
      Buffer.from(JSON.stringify({ tenant_id: randomUUID(), n: 0 })),
      Buffer.from('not json at all'),
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),
    ];
    const ids: number[] = [];
    for (const [i, body] of bodies.entries()) {
      const h = natsHeaders();
      h.set(DeadLetterHeaders.stream, `${prefix}_${Streams.bookletBuilds.name}`);
      h.set(DeadLetterHeaders.subject, jobSubject);
      h.set(DeadLetterHeaders.msgId, `discard-${i}`);
      h.set(DeadLetterHeaders.error, 'gave up');
      h.set(DeadLetterHeaders.failures, '5');
      const ack = await publisher.connection
        .jetstream()
        .publish(`${prefix}.${DeadLetterStream.subject}`, body, { headers: h });
      ids.push(ack.seq);
    }

    // Pages of two, oldest first, the cursor being the last id of a page.
    const first = await admin('GET', '/admin/v1/dead-letters?limit=2');
    expect(first.json.items.map((d: { id: number }) => d.id)).toEqual(ids.slice(0, 2));
    expect(first.json.next_cursor).toBe(String(ids[1]));
    const second = await admin('GET', `/admin/v1/dead-letters?limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.items.map((d: { id: number }) => d.id)).toEqual([ids[2]]);
    expect(second.json.next_cursor).toBeNull();

    // The payload: JSON indented, other text as is, bytes as base64.
    const shown = await admin('GET', `/admin/v1/dead-letters/${ids[0]}`);
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({
      dead_letter: { id: ids[0], msg_id: 'discard-0', failures: 5 },
      payload_encoding: 'utf8',
      payload_truncated: false,
    });
    expect(JSON.parse(shown.json.payload)).toEqual(JSON.parse(bodies[0]!.toString()));
    expect(shown.json.payload).toContain('\n  "n": 0');
    expect((await admin('GET', `/admin/v1/dead-letters/${ids[1]}`)).json.payload).toBe('not json at all');
    expect((await admin('GET', `/admin/v1/dead-letters/${ids[2]}`)).json).toMatchObject({
      payload_encoding: 'base64',
      payload: bodies[2]!.toString('base64'),
    });

    const before = (await auditRows()).length;
    const discarded = await admin('POST', `/admin/v1/dead-letters/${ids[1]}/discard`);
    expect(discarded.status).toBe(200);
    expect(discarded.json).toEqual({ id: ids[1], discarded: true });
    expect((await admin('POST', `/admin/v1/dead-letters/${ids[1]}/discard`)).status).toBe(404);
    expect((await admin('GET', `/admin/v1/dead-letters/${ids[1]}`)).status).toBe(404);
    const listed = (await admin('GET', '/admin/v1/dead-letters')).json.items.map((d: { id: number }) => d.id);
    expect(listed).toEqual([ids[0], ids[2]]);
    // The CLI discards too, under its operator.
    const cli = await runCliOnBus('jobs', 'discard', String(ids[2]));
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`dead letter ${ids[2]} discarded`);
    await publisher.connection.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);

    const audit = (await auditRows()).slice(before);
    expect(audit.map((r) => [r.operator, r.action, r.details.dead_letter_id, r.details.msg_id])).toEqual([
      ['Ana Ops', 'jobs.discard', ids[1], 'discard-1'],
      ['root-shell', 'jobs.discard', ids[2], 'discard-2'],
    ]);
    const discards = await admin('GET', '/admin/v1/audit?action=jobs.discard&limit=2');
    expect(discards.json.items.map((e: { details: { dead_letter_id: number } }) => e.details.dead_letter_id)).toEqual([
      ids[2],
      ids[1],
    ]);
  } finally {
    listener.unsubscribe();
    const jsm = await publisher.connection.jetstreamManager();
    await jsm.streams.delete(`${prefix}_dead_letters`).catch(() => undefined);
    await publisher.close();
  }
}, 30_000);

/* Bad input ------------------------------------------------------------------------------------- */

/** A pix account missing each of what it needs, or given what only inter takes: the field at fault. */
function pixCases(tenant: string): Array<[string, string, unknown, string]> {
  const path = `/admin/v1/tenants/${tenant}/provider-account`;
  const beneficiary = { name: 'Acme', tax_id: '11.222.333/0001-81', pix_key: 'pix@acme.example' };
  const pix = {
    provider: 'pix',
    beneficiary,
    base_url: 'https://pix.bank.example/v2',
    credentials: { ...PIX_CLIENT, token_url: 'https://pix.bank.example/oauth/token' },
  };
  return [
    [{ ...pix, base_url: undefined }, '/base_url'],
    [{ ...pix, credentials: PIX_CLIENT }, '/credentials/token_url'],
    [{ ...pix, credentials: { ...pix.credentials, token_url: 'ftp://x' } }, '/credentials/token_url'],
    [{ ...pix, beneficiary: { ...beneficiary, pix_key: undefined } }, '/beneficiary/pix_key'],
    [{ ...pix, provider: 'inter' }, '/credentials/token_url'],
  ].map(([body, field]) => ['PUT', path, body, field as string]);
}

it('refuses bad input with 4xx problem+json naming the field, and stores nothing', async () => {
  const tenant = (await admin('POST', '/admin/v1/tenants', { name: 'Careful ERP' })).json.tenant_id as string;
  const account = (await admin('GET', `/admin/v1/tenants/${tenant}/provider-account`)).json;
  const tenantsBefore = (await db.selectFrom('tenants').select('id').execute()).length;
  const auditBefore = (await auditRows()).length;

  const cases: Array<[string, string, unknown, string, string?]> = [
    ['POST', '/admin/v1/tenants', { name: '   ' }, '/name'],
    ['POST', '/admin/v1/tenants', {}, '/name'],
    ['POST', '/admin/v1/tenants/not-a-uuid/disable', undefined, 'tenant_id', 'path'],
    [
      'PUT',
      `/admin/v1/tenants/${tenant}/provider-account`,
      { provider: 'bank', beneficiary: { name: 'X', tax_id: '1' } },
      '/provider',
    ],
    [
      'PUT',
      `/admin/v1/tenants/${tenant}/provider-account`,
      { provider: 'sandbox', beneficiary: { name: 'Acme', tax_id: '11.222.333/0001-80' } },
      '/beneficiary/tax_id',
    ],
    [
      'PUT',
      `/admin/v1/tenants/${tenant}/provider-account`,
      { provider: 'sandbox', beneficiary: { name: 'Acme', tax_id: '11.222.333/0001-81' }, base_url: 'https://x' },
      '/base_url',
    ],
    ...pixCases(tenant),
    ['POST', `/admin/v1/tenants/${tenant}/signing-secret/rotate`, { overlap_hours: -1 }, '/overlap_hours'],
    ['POST', `/admin/v1/tenants/${tenant}/signing-secret/rotate`, { overlap_hours: 'soon' }, '/overlap_hours'],
    ['POST', '/admin/v1/dead-letters/abc/redrive', undefined, 'dead_letter_id', 'path'],
    ['GET', '/admin/v1/audit?limit=0', undefined, 'limit', 'query'],
    ['GET', '/admin/v1/audit?tenant_id=nope', undefined, 'tenant_id', 'query'],
    ['GET', '/admin/v1/audit?cursor=x', undefined, 'cursor', 'query'],
    ['GET', '/admin/v1/audit?action=DROP%20TABLE', undefined, 'action', 'query'],
    ['GET', '/admin/v1/audit?since=yesterday', undefined, 'since', 'query'],
    ['GET', '/admin/v1/audit?operator=a%00b', undefined, 'operator', 'query'],
    ['GET', '/admin/v1/audit?since=2026-11-28T10:00:00Z&until=2026-11-28T09:00:00Z', undefined, 'until', 'query'],
    ['GET', '/admin/v1/audit?until=2026-11-28T10:00:00', undefined, 'until', 'query'],
    ['GET', '/admin/v1/dead-letters?cursor=0', undefined, 'cursor', 'query'],
    ['GET', '/admin/v1/dead-letters/abc', undefined, 'dead_letter_id', 'path'],
    ['POST', '/admin/v1/dead-letters/0/discard', undefined, 'dead_letter_id', 'path'],
  ];
  for (const [method, path, body, field, where] of cases) {
    const res = await admin(method, path, body);
    expect({ path, status: res.status }).toEqual({ path, status: 422 });
    expect(res.type).toContain(PROBLEM_CONTENT_TYPE);
    expect(res.json.code).toBe('validation_failed');
    expect(res.json.errors).toContainEqual(expect.objectContaining({ path: field, ...(where ? { in: where } : {}) }));
  }
  const malformed = await fetch(`${gateway.adminUrl}/admin/v1/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: '{"name":',
  });
  expect(malformed.status).toBe(400);
  expect((await admin('GET', '/admin/v1/nothing')).status).toBe(404);
  expect((await admin('PUT', '/admin/v1/tenants')).status).toBe(405);

  expect((await db.selectFrom('tenants').select('id').execute()).length).toBe(tenantsBefore);
  expect((await auditRows()).length).toBe(auditBefore);
  expect((await admin('GET', `/admin/v1/tenants/${tenant}/provider-account`)).json).toEqual(account);
});
