import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { connectBus } from '@payments/bus';
import { SIGNING_SECRET_MAX_AGE_MS, Subjects, type SigningSecretReply } from '@payments/contracts';
import {
  DEV_CREDENTIALS_ENCRYPTION_KEY,
  keyId,
  keyring,
  parseEncryptionKey,
  sealedKeyId,
} from '@payments/credential-seal';
import { createDatabase, createTestDatabase, migrateService, migrateToLatest, serviceDatabaseUrl } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from '../src/config';
import { removeBus } from '@payments/test-support/bus-provision';
import { provisionFromEnv as provisionBusFor } from '../src/transport/bus/bus-provision';
import { gatewayMigrations, migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { startGateway } from '../src/server';
import { listAdminAudit, resolveOperator } from '../src/domain/tenancy/admin-audit';
import { setProviderAccount } from '../src/domain/tenancy/provider-accounts';
import { reencryptSecrets } from '../src/domain/tenancy/reencrypt';
import { rotateSigningSecret, signingSecretsOf } from '../src/domain/tenancy/signing-secrets';
import { createTenant, disableTenant, issueToken, revokeToken } from '../src/domain/tenancy/tenant-admin';

/*
 * Tenants' signing secrets at rest and in rotation, and the audit of operator actions.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const silent = createLogger('test', 'silent');
const devRing = keyring(parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY));
const by = { operator: 'alice' };

/** Every text or jsonb value of every table of schema gateway, as text. */
async function everyTextValue(db: Kysely<GatewayDatabase>): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = ${SCHEMA} and data_type in ('text', 'jsonb', 'character varying')`.execute(db);
  const values: string[] = [];
  for (const { table_name, column_name } of columns.rows) {
    const rows = await sql<{ v: string | null }>`select ${sql.ref(column_name)}::text as v from ${sql.table(
      `${SCHEMA}.${table_name}`,
    )}`.execute(db);
    values.push(...rows.rows.flatMap((r) => (r.v === null ? [] : [r.v])));
  }
  return values;
}

let database: { url: string; drop: () => Promise<void> };
let db: Kysely<GatewayDatabase>;
beforeEach(async () => {
  database = await createTestDatabase();
  db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 2 });
});
afterEach(async () => {
  await db.destroy();
  await database.drop();
});

describe('migration 0004', () => {
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0004'));

  async function tenantInClear(secret: string): Promise<string> {
    await migrateToLatest(db, SCHEMA, before);
    const id = '00000000-0000-4000-8000-000000000001';
    await sql`insert into tenants (id, name, signing_secret) values (${id}, 'Old', ${secret})`.execute(db);
    return id;
  }

  it('seals the secrets stored in clear when migrated before the gateway starts: none left readable, the same secret served', async () => {
    const secret = 'whsec_' + randomBytes(32).toString('base64');
    const tenantId = await tenantInClear(secret);
    const prefix = `t${randomBytes(5).toString('hex')}`;
    await provisionBusFor({ BUS_PREFIX: prefix });
    const config = loadGatewayConfig({
      DATABASE_URL: serviceDatabaseUrl(database.url, SCHEMA),
      BUS_PREFIX: prefix,
      PORT: '0',
      LOG_LEVEL: 'silent',
    });
    // npm run migrate seals them, with the gateway's key, before the gateway starts.
    await migrateService({
      url: database.url,
      schema: SCHEMA,
      migrations: gatewayMigrations(keyring(config.credentialsEncryptionKey, config.credentialsPreviousKeys)),
    });
    const gateway = await startGateway(config, silent);
    const bus = await connectBus({ url: NATS_URL, prefix, name: 'test-callback-svc', logger: silent });
    try {
      const values = await everyTextValue(db);
      expect(values.length).toBeGreaterThan(0);
      expect(values.filter((v) => v.includes('whsec_'))).toEqual([]);
      const reply = await bus.request(Subjects.tenants.signingSecret, { tenant_id: tenantId }, { service: 'gateway' });
      expect(reply).toEqual({
        signing_secret: secret,
        previous_signing_secret: null,
        previous_valid_until: null,
        max_age_ms: SIGNING_SECRET_MAX_AGE_MS,
      });
    } finally {
      await bus.close();
      await gateway.stop();
      await removeBus(prefix);
    }
  });

  it('without a key, refuses a database with secrets in clear and keeps them', async () => {
    await tenantInClear('whsec_x');
    await expect(migrateToLatest(db, SCHEMA, gatewayMigrations())).rejects.toThrow(/0004.*CREDENTIALS_ENCRYPTION_KEY/s);
    const row = await sql<{ signing_secret: string }>`select signing_secret from tenants`.execute(db);
    expect(row.rows).toEqual([{ signing_secret: 'whsec_x' }]);
  });
});

describe('rotation', () => {
  beforeEach(async () => {
    await migrateToLatest(db, SCHEMA, migrations);
  });

  it('keeps the old secret for the overlap, then serves the new one alone; 0 ends the old one at once', async () => {
    const tenant = await createTenant(db, 'Rotating', { mode: 'development', keyring: devRing, by });
    const first = await signingSecretsOf(db, devRing, tenant.tenant_id);
    expect(first).toEqual({
      signing_secret: tenant.signing_secret,
      previous_signing_secret: null,
      previous_valid_until: null,
      max_age_ms: SIGNING_SECRET_MAX_AGE_MS,
    });

    const start = Date.now();
    const rotated = await rotateSigningSecret(db, devRing, tenant.tenant_id, 1.5, by);
    expect(rotated.signing_secret).toMatch(/^whsec_/);
    expect(rotated.signing_secret).not.toBe(tenant.signing_secret);
    // 1.5 hours from the rotation (Postgres's clock, within a few seconds of ours).
    expect(Math.abs(Date.parse(rotated.previous_valid_until) - start - 5_400_000)).toBeLessThan(5_000);
    expect(await signingSecretsOf(db, devRing, tenant.tenant_id)).toEqual({
      signing_secret: rotated.signing_secret,
      previous_signing_secret: tenant.signing_secret,
      previous_valid_until: rotated.previous_valid_until,
      max_age_ms: SIGNING_SECRET_MAX_AGE_MS,
    });

    // An overlap shorter than the reuse time: a reply may not be reused beyond it.
    const short = await rotateSigningSecret(db, devRing, tenant.tenant_id, 0.0001, by);
    const during = (await signingSecretsOf(db, devRing, tenant.tenant_id)) as SigningSecretReply;
    expect(during.previous_signing_secret).toBe(rotated.signing_secret);
    expect(during.max_age_ms).toBeLessThanOrEqual(360);
    await new Promise((r) => setTimeout(r, 400));
    expect(await signingSecretsOf(db, devRing, tenant.tenant_id)).toMatchObject({
      signing_secret: short.signing_secret,
      previous_signing_secret: null,
      max_age_ms: SIGNING_SECRET_MAX_AGE_MS,
    });

    const now = await rotateSigningSecret(db, devRing, tenant.tenant_id, 0, by);
    expect(await signingSecretsOf(db, devRing, tenant.tenant_id)).toMatchObject({
      signing_secret: now.signing_secret,
      previous_signing_secret: null,
    });
    const row = await db.selectFrom('tenants').selectAll().where('id', '=', tenant.tenant_id).executeTakeFirstOrThrow();
    expect(row.sealed_previous_signing_secret).toBeNull();
  });

  it('refuses a bad overlap or an unknown tenant, changing nothing', async () => {
    const tenant = await createTenant(db, 'Strict', { mode: 'development', keyring: devRing, by });
    for (const hours of [-1, Number.NaN, 721])
      await expect(rotateSigningSecret(db, devRing, tenant.tenant_id, hours, by)).rejects.toThrow(/--overlap-hours/);
    await expect(rotateSigningSecret(db, devRing, '00000000-0000-4000-8000-000000000009', 1, by)).rejects.toThrow(
      /no tenant/,
    );
    expect((await signingSecretsOf(db, devRing, tenant.tenant_id))!.signing_secret).toBe(tenant.signing_secret);
  });
});

describe('secrets reencrypt', () => {
  beforeEach(async () => {
    await migrateToLatest(db, SCHEMA, migrations);
  });

  it('seals with the current key whatever an older key sealed, and then has nothing left to do', async () => {
    const older = randomBytes(32);
    const newer = randomBytes(32);
    const oldRing = keyring(older);
    const tenant = await createTenant(db, 'Keys', { mode: 'development', keyring: oldRing, by });
    const rotated = await rotateSigningSecret(db, oldRing, tenant.tenant_id, 24, by);
    await setProviderAccount(
      db,
      oldRing,
      {
        tenantId: tenant.tenant_id,
        provider: 'inter',
        beneficiary: { name: 'Keys Ltda', taxId: '11.222.333/0001-81' },
        credentials: {
          client_id: 'id',
          client_secret: 'client-secret',
          cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
          key_pem: '-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n',
        },
      },
      by,
    );

    const ring = keyring(newer, [older]);
    expect(await reencryptSecrets(db, ring, by)).toEqual({
      key_id: keyId(newer),
      signing_secrets: 2,
      provider_credentials: 1,
      already_current: 0,
    });
    const row = await db.selectFrom('tenants').selectAll().where('id', '=', tenant.tenant_id).executeTakeFirstOrThrow();
    expect(sealedKeyId(row.sealed_signing_secret)).toBe(keyId(newer));
    // The new key alone opens everything now.
    expect(await signingSecretsOf(db, keyring(newer), tenant.tenant_id)).toMatchObject({
      signing_secret: rotated.signing_secret,
      previous_signing_secret: tenant.signing_secret,
    });
    expect(await reencryptSecrets(db, ring, by)).toMatchObject({
      signing_secrets: 0,
      provider_credentials: 0,
      already_current: 3,
    });
  });
});

describe('admin audit', () => {
  beforeEach(async () => {
    await migrateToLatest(db, SCHEMA, migrations);
  });

  it('records who did what to which tenant, in order, with no secret in it', async () => {
    const tenant = await createTenant(db, 'Audited', { mode: 'development', keyring: devRing, by });
    const token = await issueToken(db, tenant.tenant_id, { operator: 'bob' });
    await revokeToken(db, token.integration_token, by);
    const rotated = await rotateSigningSecret(db, devRing, tenant.tenant_id, 2, by);
    await disableTenant(db, tenant.tenant_id, { operator: 'bob' });
    const other = await createTenant(db, 'Other', { mode: 'production', keyring: devRing });

    const rows = await listAdminAudit(db, { tenantId: tenant.tenant_id });
    expect(rows.map((r) => [r.operator, r.action])).toEqual([
      ['alice', 'tenant.create'],
      ['bob', 'token.create'],
      ['alice', 'token.revoke'],
      ['alice', 'tenant.rotate-secret'],
      ['bob', 'tenant.disable'],
    ]);
    expect(rows[1].details).toEqual({ token_id: token.token_id });
    expect(rows[2].details).toEqual({ token_id: token.token_id });
    expect(rows[3].details).toEqual({ overlap_hours: 2, previous_valid_until: rotated.previous_valid_until });
    expect(rows.every((r) => r.tenant_id === tenant.tenant_id && !Number.isNaN(Date.parse(r.at)))).toBe(true);
    const text = JSON.stringify(await listAdminAudit(db));
    for (const secret of [
      tenant.signing_secret,
      rotated.signing_secret,
      tenant.integration_token,
      token.integration_token,
    ])
      expect(text).not.toContain(secret);
    expect(text).not.toContain('whsec_');
    // Code that calls an action directly is recorded as such.
    expect((await listAdminAudit(db, { tenantId: other.tenant_id }))[0]).toMatchObject({
      operator: '(code)',
      action: 'tenant.create',
    });
  });

  it('names the operator from --operator or ADMIN_OPERATOR; production refuses without one', () => {
    expect(resolveOperator('carol', { ADMIN_OPERATOR: 'dave' }, 'production')).toEqual({ operator: 'carol' });
    expect(resolveOperator(undefined, { ADMIN_OPERATOR: ' dave ' }, 'production')).toEqual({ operator: 'dave' });
    expect(() => resolveOperator(undefined, {}, 'production')).toThrow(/ADMIN_OPERATOR/);
    expect(() => resolveOperator('', { ADMIN_OPERATOR: '' }, 'production')).toThrow(/ADMIN_OPERATOR/);
    expect(resolveOperator(undefined, {}, 'development', () => 'eve')).toEqual({ operator: 'eve' });
    expect(
      resolveOperator(undefined, {}, 'development', () => {
        throw new Error('no user');
      }),
    ).toEqual({ operator: 'development' });
    expect(() => resolveOperator('a\nb', {}, 'development')).toThrow(/printable/);
  });
});
