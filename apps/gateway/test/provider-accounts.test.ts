import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import {
  API_OPERATIONS,
  QueueGroups,
  ServiceError,
  SLIP_PDF_PATH,
  SLIP_QRCODE_PATH,
  Subjects,
  type ProviderAccountVersion,
  type ReceivablesCreateCommand,
} from '@payments/contracts';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, open, parseEncryptionKey } from '@payments/credential-seal';
import { createDatabase, migrateToLatest } from '@payments/db';
import { signLink } from '@payments/signed-links';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import type { RunningGateway } from '../src/server';
import { currentProviderAccount, ensureDevelopmentAccounts } from '../src/db/provider-accounts';
import {
  DEVELOPMENT_PAYEE_TAX_ID,
  providerAccountKey,
  type ProviderAccountInput,
} from '../src/domain/tenancy/provider-account-input';
import { loadCredentialsKey, setProviderAccount, showProviderAccount } from '../src/domain/tenancy/provider-accounts';
import { AdminError, createTenant } from '../src/domain/tenancy/tenant-admin';
import { loginCheckingNats, type LoginCheckingNats } from '@payments/test-support/private-nats';
import { startGatewayUnderTest } from './support/gateway-under-test';

/*
 * Provider accounts on the gateway's side: versions set by the operator, the development
 * default, and intake: the current version travels with each create command, and in production a
 * tenant without one is refused with 422 no_provider_account before anything reaches the bus.
 */

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n';

interface Running {
  gateway: RunningGateway;
  db: Kysely<GatewayDatabase>;
  /** A second connection on the gateway's bus prefix, playing receivables-svc. */
  bus: Bus;
  downloadLinkSecret: string;
  stop(): Promise<void>;
}

/** A gateway on its own database and bus prefix; `env` on top (NODE_ENV=production, its secrets). */
async function start(env: Record<string, string> = {}, beforeStart?: (url: string) => Promise<void>, natsUrl?: string) {
  const running = await startGatewayUnderTest(env, { beforeStart, natsUrl });
  const bus = await running.standIn('test-receivables');
  return { ...running, bus, downloadLinkSecret: running.config.downloadLinkSecret } satisfies Running;
}

/** A production gateway logs in as the login-checking NATS's user (`nats`), the only one it accepts. */
const productionEnv = (nats: LoginCheckingNats) => ({
  NODE_ENV: 'production',
  JWT_PRIVATE_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  DOWNLOAD_LINK_SECRET: randomBytes(32).toString('hex'),
  // Production refuses to start without these too (tenants here are sealed with the development key).
  CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  CREDENTIALS_PREVIOUS_KEYS: DEV_CREDENTIALS_ENCRYPTION_KEY,
  ...nats.env,
});

/** A valid batch (the gateway checks its shape only; client ids are receivables-svc's business). */
function createBody(): unknown {
  const operation = API_OPERATIONS.find((o) => o.operationId === 'createReceivables')!;
  return Object.values(operation.requestBody!.examples)[0].value;
}

async function accessToken(gateway: RunningGateway, integrationToken: string): Promise<string> {
  const res = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${integrationToken}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function postCreate(gateway: RunningGateway, token: string, key: string): Promise<Response> {
  return fetch(`${gateway.url}/api/v1/accounts-receivable`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(createBody()),
  });
}

/** Plays receivables-svc on the create subject (subscribed once this resolves): records each command and accepts it. */
async function recordCreates(bus: Bus): Promise<ReceivablesCreateCommand[]> {
  const received: ReceivablesCreateCommand[] = [];
  bus.serve(
    Subjects.receivables.create,
    async (command) => {
      received.push(command);
      return { status: 'success', message: `${command.receivables.length} receivable(s) received` };
    },
    { queue: QueueGroups.receivables },
  );
  await bus.connection.flush();
  return received;
}

const sandboxInput = (tenantId: string, name = 'Acme Comércio Ltda'): ProviderAccountInput => ({
  tenantId,
  provider: 'sandbox',
  beneficiary: { name, taxId: '12.345.678/0001-95', city: 'Ribeirão Preto', pixKey: 'financeiro@acme.com.br' },
});

describe('a production gateway', () => {
  let running: Running;
  let nats: LoginCheckingNats;
  beforeAll(async () => {
    // A production gateway refuses a NATS that takes any login, as the shared one does.
    nats = await loginCheckingNats();
    running = await start(productionEnv(nats), undefined, nats.nats.url);
  });
  afterAll(async () => {
    await running?.stop();
    await nats?.nats.destroy();
  });

  it('refuses charges of a tenant without a provider account (422 no_provider_account), forwarding nothing; the same request goes through once one is set', async () => {
    const { gateway, db, bus } = running;
    const received = await recordCreates(bus);
    const tenant = await createTenant(db, 'Prod Corp', { mode: 'production' });
    expect(await currentProviderAccount(db, tenant.tenant_id)).toBeUndefined();
    const token = await accessToken(gateway, tenant.integration_token);
    const key = randomUUID();

    const refused = await postCreate(gateway, token, key);
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await refused.json()) as { code: string; detail: string; status: number };
    expect(problem).toMatchObject({ code: 'no_provider_account', status: 422 });
    expect(problem.detail).toContain(`npm run admin -- tenant account --tenant ${tenant.tenant_id}`);
    // Had the gateway asked receivables-svc, the recorder would have answered and it would say 202.
    expect(received).toHaveLength(0);

    // The refusal was not stored under the Idempotency-Key: the same request works once the account is set.
    const account = await setProviderAccount(db, undefined, sandboxInput(tenant.tenant_id));
    const accepted = await postCreate(gateway, token, key);
    expect(accepted.status).toBe(202);
    expect(received).toHaveLength(1);
    expect(received[0].tenant_id).toBe(tenant.tenant_id);
    expect(received[0].provider_account).toEqual<ProviderAccountVersion>({
      account_id: account.account_id,
      tenant_id: tenant.tenant_id,
      provider: 'sandbox',
      account_key: providerAccountKey('sandbox', null, null),
      beneficiary: account.beneficiary,
      base_url: null,
      sealed_credentials: null,
    });
  });
});

describe('a development gateway', () => {
  const legacy = { tenantId: '' };
  let running: Running;
  beforeAll(async () => {
    // A tenant from before provider accounts: migrate, add it without an account, then start.
    running = await start({}, async (url) => {
      const db = createDatabase<GatewayDatabase>({ url, schema: SCHEMA, poolSize: 1 });
      await migrateToLatest(db, SCHEMA, migrations);
      legacy.tenantId = (await createTenant(db, 'Old Tenant Ltda', { mode: 'production' })).tenant_id;
      await db.destroy();
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('gives tenants without an account the sandbox one at start, once', async () => {
    const account = await currentProviderAccount(running.db, legacy.tenantId);
    expect(account).toMatchObject({
      provider: 'sandbox',
      beneficiary: { name: 'Old Tenant Ltda', tax_id: DEVELOPMENT_PAYEE_TAX_ID, city: 'Sao Paulo', pix_key: null },
      base_url: null,
      sealed_credentials: null,
    });
    expect(await ensureDevelopmentAccounts(running.db)).toBe(0);
    expect(await currentProviderAccount(running.db, legacy.tenantId)).toEqual(account);
  });

  it('tenant create gives the tenant the sandbox account in development only', async () => {
    const dev = await createTenant(running.db, '  Nova Escola  ', { mode: 'development' });
    expect(await currentProviderAccount(running.db, dev.tenant_id)).toMatchObject({
      provider: 'sandbox',
      beneficiary: { name: 'Nova Escola', tax_id: DEVELOPMENT_PAYEE_TAX_ID, city: 'Sao Paulo' },
    });
    const prod = await createTenant(running.db, 'Prod', { mode: 'production' });
    expect(await currentProviderAccount(running.db, prod.tenant_id)).toBeUndefined();
  });

  it('sends the current version with each create command; a new version applies to later batches only', async () => {
    const { gateway, db, bus } = running;
    const received = await recordCreates(bus);
    const tenant = await createTenant(db, 'Versions Ltda', { mode: 'development' });
    const token = await accessToken(gateway, tenant.integration_token);
    const first = await currentProviderAccount(db, tenant.tenant_id);
    expect((await postCreate(gateway, token, randomUUID())).status).toBe(202);
    const second = await setProviderAccount(db, undefined, sandboxInput(tenant.tenant_id, 'Versions Two'));
    expect((await postCreate(gateway, token, randomUUID())).status).toBe(202);
    expect(received.map((c) => c.provider_account.account_id)).toEqual([first!.account_id, second.account_id]);
    expect(received[1].provider_account.beneficiary.name).toBe('Versions Two');
  });

  it('serves the slip PDF behind a signed link: 200 inline PDF, 403 altered, 410 expired', async () => {
    const { gateway, bus, downloadLinkSecret } = running;
    const pdf = Buffer.from('%PDF-1.4\n% a slip\n');
    const asked: string[] = [];
    bus.serve(
      Subjects.receivables.slipPdf,
      async ({ receivable_id }) => {
        asked.push(receivable_id);
        return { pdf_base64: pdf.toString('base64') };
      },
      { queue: QueueGroups.receivables },
    );
    await bus.connection.flush();
    const id = randomUUID();
    const link = (expiresAt: Date) => {
      const { expires, signature } = signLink(downloadLinkSecret, id, expiresAt);
      return `${gateway.url}${SLIP_PDF_PATH}/${id}?expires=${expires}&signature=${signature}`;
    };

    const ok = await fetch(link(new Date(Date.now() + 60_000)));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/pdf');
    expect(ok.headers.get('content-disposition')).toBe(`inline; filename="boleto-${id}.pdf"`);
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(pdf);
    expect(asked).toEqual([id]);

    const altered = await fetch(link(new Date(Date.now() + 60_000)).replace(id, randomUUID()));
    expect(altered.status).toBe(403);
    const expired = await fetch(link(new Date(Date.now() - 1_000)));
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as { code: string }).code).toBe('gone');
    expect(asked).toHaveLength(1);
  });

  it('serves the PIX QR code PNG behind a signed link: 200 image/png, 404 unknown, 403 altered, 410 expired', async () => {
    const { gateway, bus, downloadLinkSecret } = running;
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(32)]);
    const known = randomUUID();
    const asked: string[] = [];
    bus.serve(
      Subjects.receivables.slipQrCode,
      async ({ receivable_id }) => {
        asked.push(receivable_id);
        if (receivable_id !== known) throw new ServiceError('not_found', `no receivable ${receivable_id}`);
        return { png_base64: png.toString('base64') };
      },
      { queue: QueueGroups.receivables },
    );
    await bus.connection.flush();
    const link = (id: string, expiresAt: Date) => {
      const { expires, signature } = signLink(downloadLinkSecret, id, expiresAt);
      return `${gateway.url}${SLIP_QRCODE_PATH}/${id}?expires=${expires}&signature=${signature}`;
    };
    const inAMinute = () => new Date(Date.now() + 60_000);

    const ok = await fetch(link(known, inAMinute()));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/png');
    expect(ok.headers.get('content-disposition')).toBe(`inline; filename="qrcode-${known}.png"`);
    expect(ok.headers.get('cache-control')).toBe('private, max-age=300');
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(png);
    expect(asked).toEqual([known]);

    const unknown = randomUUID();
    const missing = await fetch(link(unknown, inAMinute()));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
    expect(asked).toEqual([known, unknown]);

    const altered = await fetch(link(known, inAMinute()).replace(known, randomUUID()));
    expect(altered.status).toBe(403);
    const unsigned = await fetch(`${gateway.url}${SLIP_QRCODE_PATH}/${known}`);
    expect(unsigned.status).toBe(403);
    const expired = await fetch(link(known, new Date(Date.now() - 1_000)));
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as { code: string }).code).toBe('gone');
    expect(asked).toHaveLength(2);
  });
});

describe('setting an account', () => {
  let running: Running;
  const key = parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY);
  beforeAll(async () => {
    running = await start();
  });
  afterAll(async () => {
    await running?.stop();
  });

  const interInput = (tenantId: string): ProviderAccountInput => ({
    tenantId,
    provider: 'inter',
    beneficiary: { name: 'Inter Client SA', taxId: '529.982.247-25', agency: '0001', account: '12345-6' },
    baseUrl: 'https://cdpj-sandbox.partners.uatinter.co/',
    credentials: { client_id: 'cid', client_secret: ' the-secret\n', cert_pem: PEM_CERT, key_pem: PEM_KEY },
  });

  it('keeps every version: the old one superseded, the new one current, credentials sealed to its id', async () => {
    const { db } = running;
    const tenant = await createTenant(db, 'Two Versions', { mode: 'development' });
    const before = await currentProviderAccount(db, tenant.tenant_id);
    const view = await setProviderAccount(db, key, interInput(tenant.tenant_id));
    expect(view).toMatchObject({
      provider: 'inter',
      credentials: 'set',
      base_url: 'https://cdpj-sandbox.partners.uatinter.co',
      beneficiary: { name: 'Inter Client SA', tax_id: '529.982.247-25', city: null, agency: '0001' },
    });
    expect(JSON.stringify(view)).not.toMatch(/the-secret|BEGIN/);
    expect(await showProviderAccount(db, tenant.tenant_id)).toEqual(view);

    const rows = await db
      .selectFrom('provider_accounts')
      .selectAll()
      .where('tenant_id', '=', tenant.tenant_id)
      .orderBy('created_at')
      .execute();
    expect(rows.map((r) => [r.id, r.superseded_at === null])).toEqual([
      [before!.account_id, false],
      [view.account_id, true],
    ]);
    expect(rows[0].superseded_at!.getTime()).toBe(rows[1].created_at.getTime());
    const current = (await currentProviderAccount(db, tenant.tenant_id))!;
    expect(JSON.parse(open(key, current.sealed_credentials!, current.account_id))).toEqual({
      client_id: 'cid',
      client_secret: 'the-secret',
      cert_pem: PEM_CERT,
      key_pem: PEM_KEY,
    });
    expect(() => open(key, current.sealed_credentials!, before!.account_id)).toThrow();
  });

  it('--replace-webhook travels sealed with the newest credentials to receivables-svc; a sandbox account refuses it', async () => {
    const { db, bus } = running;
    const tenant = await createTenant(db, 'Replace Webhook', { mode: 'development' });
    const input = interInput(tenant.tenant_id);
    input.credentials = { ...input.credentials!, replace_webhook: true };
    const replacing = (await setProviderAccount(db, key, input)).account_id;
    const { account_key } = (await currentProviderAccount(db, tenant.tenant_id))!;
    const ask = () =>
      bus.request(
        Subjects.tenants.providerCredentials,
        { tenant_id: tenant.tenant_id, account_key },
        { service: 'gateway' },
      );
    expect(JSON.parse(open(key, (await ask()).sealed_credentials!, replacing))).toMatchObject({
      replace_webhook: true,
    });
    const keeping = (await setProviderAccount(db, key, interInput(tenant.tenant_id))).account_id;
    expect(JSON.parse(open(key, (await ask()).sealed_credentials!, keeping))).not.toHaveProperty('replace_webhook');
    await expect(
      setProviderAccount(db, key, {
        tenantId: tenant.tenant_id,
        provider: 'sandbox',
        beneficiary: { name: 'Escola', taxId: '529.982.247-25' },
        credentials: { replace_webhook: true },
      }),
    ).rejects.toThrow(/--replace-webhook is only for --provider inter/);
  });

  it('keeps one account key across credential renewals, and serves the newest credentials of that key over the bus', async () => {
    const { db, bus } = running;
    const tenant = await createTenant(db, 'Renewals', { mode: 'development' });
    const first = (await setProviderAccount(db, key, interInput(tenant.tenant_id))).account_id;
    const renewed = interInput(tenant.tenant_id);
    renewed.credentials = { ...renewed.credentials!, client_secret: 'renewed-secret' };
    const second = (await setProviderAccount(db, key, renewed)).account_id;
    const versions = await db.selectFrom('provider_accounts').selectAll().where('id', 'in', [first, second]).execute();
    const [keyOfFirst, keyOfSecond] = [first, second].map((id) => versions.find((v) => v.id === id)!.account_key);
    expect(keyOfSecond).toBe(keyOfFirst);

    // Another client id is another bank account: its own key, and the old key still names the renewed version.
    const other = interInput(tenant.tenant_id);
    other.credentials = { ...other.credentials!, client_id: 'another-client' };
    const third = (await setProviderAccount(db, key, other)).account_id;
    expect((await currentProviderAccount(db, tenant.tenant_id))!.account_key).not.toBe(keyOfFirst);

    const reply = await bus.request(
      Subjects.tenants.providerCredentials,
      { tenant_id: tenant.tenant_id, account_key: keyOfFirst },
      { service: 'gateway' },
    );
    expect(reply.account_id).toBe(second);
    expect(JSON.parse(open(key, reply.sealed_credentials!, second)).client_secret).toBe('renewed-secret');
    expect(third).not.toBe(second);
    // Another tenant cannot read them with the same key.
    const stranger = await createTenant(db, 'Stranger', { mode: 'development' });
    await expect(
      bus.request(
        Subjects.tenants.providerCredentials,
        { tenant_id: stranger.tenant_id, account_key: keyOfFirst },
        { service: 'gateway' },
      ),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  const pixInput = (tenantId: string, mode?: 'development' | 'production'): ProviderAccountInput => ({
    tenantId,
    provider: 'pix',
    beneficiary: { name: 'Banco Qualquer Client SA', taxId: '529.982.247-25', pixKey: 'pix@client.example' },
    pixApiUrl: 'https://pix.bank.example/api/v2/',
    credentials: {
      client_id: 'pix-cid',
      client_secret: 'pix-secret\n',
      cert_pem: PEM_CERT,
      key_pem: PEM_KEY,
      token_url: 'https://auth.bank.example/oauth/token',
    },
    ...(mode ? { mode } : {}),
  });

  it('sets a pix account: base_url its PIX API root, the token URL sealed with the client, its own account key', async () => {
    const { db } = running;
    const tenant = await createTenant(db, 'Pix Bank Client', { mode: 'development' });
    const view = await setProviderAccount(db, key, pixInput(tenant.tenant_id));
    expect(view).toMatchObject({
      provider: 'pix',
      base_url: 'https://pix.bank.example/api/v2',
      credentials: 'set',
      beneficiary: { pix_key: 'pix@client.example' },
    });
    const current = (await currentProviderAccount(db, tenant.tenant_id))!;
    expect(JSON.parse(open(key, current.sealed_credentials!, current.account_id))).toEqual({
      client_id: 'pix-cid',
      client_secret: 'pix-secret',
      cert_pem: PEM_CERT,
      key_pem: PEM_KEY,
      token_url: 'https://auth.bank.example/oauth/token',
    });
    expect(current.account_key).toBe(providerAccountKey('pix', 'https://pix.bank.example/api/v2', 'pix-cid'));
    const audit = await db
      .selectFrom('admin_audit')
      .select('details')
      .where('tenant_id', '=', tenant.tenant_id)
      .where('action', '=', 'tenant.account')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({
      provider: 'pix',
      base_url: 'https://pix.bank.example/api/v2',
      pix_key: 'pix@client.example',
      token_url: 'https://auth.bank.example/oauth/token',
      credentials: 'set',
    });
    expect(JSON.stringify(audit.details)).not.toMatch(/pix-secret|pix-cid|BEGIN/);
  });

  it('a pix account: each missing flag named; http URLs only in development; inter refuses its flags', async () => {
    const { db } = running;
    const tenant = await createTenant(db, 'Pix Strict', { mode: 'development' });
    const before = await currentProviderAccount(db, tenant.tenant_id);
    const base = pixInput(tenant.tenant_id);
    const http = { pixApiUrl: 'http://127.0.0.1:3101/pix/v2' };
    const httpToken = { credentials: { ...base.credentials, token_url: 'http://127.0.0.1:3101/pix/oauth/token' } };
    const cases: Array<[ProviderAccountInput, RegExp]> = [
      [{ ...base, pixApiUrl: undefined }, /^--pix-api-url is required/],
      [{ ...base, credentials: { ...base.credentials, token_url: undefined } }, /^--token-url is required/],
      [{ ...base, credentials: { ...base.credentials, client_id: undefined } }, /^--client-id is required/],
      [{ ...base, credentials: { ...base.credentials, key_pem: undefined } }, /^--key-file is required/],
      [
        { ...base, beneficiary: { ...base.beneficiary, pixKey: undefined } },
        /^--pix-key is required for --provider pix/,
      ],
      [{ ...base, pixApiUrl: 'ftp://x' }, /^--pix-api-url must be an http\(s\) URL/],
      [{ ...base, ...http }, /^--pix-api-url must be an https URL in production/],
      [{ ...base, ...httpToken }, /^--token-url must be an https URL in production/],
      [{ ...base, baseUrl: 'https://x' }, /^--base-url is only for --provider inter/],
      [{ ...interInput(tenant.tenant_id), pixApiUrl: 'https://x' }, /^--pix-api-url is only for --provider pix/],
      [{ ...interInput(tenant.tenant_id), credentials: base.credentials }, /^--token-url is only for --provider pix/],
      [{ ...sandboxInput(tenant.tenant_id), pixApiUrl: 'https://x' }, /^--pix-api-url is only for --provider pix/],
    ];
    for (const [input, message] of cases) await expect(setProviderAccount(db, key, input)).rejects.toThrow(message);
    await expect(setProviderAccount(db, undefined, base)).rejects.toThrow(/CREDENTIALS_ENCRYPTION_KEY.*pix/);
    expect(await currentProviderAccount(db, tenant.tenant_id)).toEqual(before);

    // Development takes a bank's sandbox over http.
    const development = { ...pixInput(tenant.tenant_id, 'development'), ...http, ...httpToken };
    expect(await setProviderAccount(db, key, development)).toMatchObject({
      provider: 'pix',
      base_url: 'http://127.0.0.1:3101/pix/v2',
    });
  });

  it('refuses bad input naming the flag, and changes nothing', async () => {
    const { db } = running;
    const tenant = await createTenant(db, 'Strict', { mode: 'development' });
    const before = await currentProviderAccount(db, tenant.tenant_id);
    const base = interInput(tenant.tenant_id);
    const cases: Array<[ProviderAccountInput, RegExp]> = [
      [{ ...base, provider: 'itau' }, /--provider must be one of sandbox, inter, pix/],
      [{ ...base, provider: '' }, /--provider is required/],
      [{ ...base, beneficiary: { ...base.beneficiary, name: '  ' } }, /--beneficiary-name is required/],
      [{ ...base, beneficiary: { ...base.beneficiary, taxId: '529.982.247-26' } }, /--beneficiary-tax-id must be/],
      [{ ...base, credentials: { ...base.credentials, client_id: undefined } }, /--client-id is required/],
      [{ ...base, credentials: { ...base.credentials, client_secret: '\n' } }, /--client-secret-file is required/],
      [{ ...base, credentials: { ...base.credentials, cert_pem: PEM_KEY } }, /--cert-file must be a PEM certificate/],
      [{ ...base, credentials: { ...base.credentials, key_pem: 'not a key' } }, /--key-file must be a PEM private key/],
      [{ ...base, baseUrl: 'ftp://x' }, /--base-url must be an http\(s\) URL/],
      [
        { ...sandboxInput(tenant.tenant_id), credentials: { client_id: 'x' } },
        /--client-id is only for --provider inter/,
      ],
      [{ ...sandboxInput(tenant.tenant_id), baseUrl: 'https://x' }, /--base-url is only for --provider inter/],
      [{ ...base, tenantId: 'nope' }, /--tenant must be a tenant id/],
      [{ ...base, tenantId: randomUUID() }, /^no tenant /],
    ];
    for (const [input, message] of cases) {
      const attempt = setProviderAccount(db, key, input);
      await expect(attempt).rejects.toThrow(AdminError);
      await expect(attempt).rejects.toThrow(message);
    }
    await expect(setProviderAccount(db, undefined, base)).rejects.toThrow(/CREDENTIALS_ENCRYPTION_KEY/);
    expect(await currentProviderAccount(db, tenant.tenant_id)).toEqual(before);
    await expect(showProviderAccount(db, randomUUID())).rejects.toThrow(/^no tenant /);
  });
});

describe('CREDENTIALS_ENCRYPTION_KEY', () => {
  const own = randomBytes(32).toString('base64');
  it('falls back to the development key in development only', () => {
    expect(loadCredentialsKey({}, 'development')).toEqual(parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY));
    expect(() => loadCredentialsKey({}, 'production')).toThrow(/CREDENTIALS_ENCRYPTION_KEY is required in production/);
    expect(() =>
      loadCredentialsKey({ CREDENTIALS_ENCRYPTION_KEY: DEV_CREDENTIALS_ENCRYPTION_KEY }, 'production'),
    ).toThrow(/development default/);
    expect(loadCredentialsKey({ CREDENTIALS_ENCRYPTION_KEY: own }, 'production')).toEqual(Buffer.from(own, 'base64'));
    expect(() => loadCredentialsKey({ CREDENTIALS_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'development')).toThrow(
      /CREDENTIALS_ENCRYPTION_KEY must be 32 bytes/,
    );
  });
});
