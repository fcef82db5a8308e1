import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMigratedTestDatabase } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import { createLogger } from '@payments/logger';
import { DEV_INTER_SANDBOX_DIR, DEV_INTER_SANDBOX_PORT } from '@payments/config';
import { loadBankSandboxConfig, startBankSandbox, type RunningBankSandbox } from '../src';
import { control } from './harness';
import { InterTestClient, type TestIntegration } from './inter-client';

/**
 * `npm start` (NODE_ENV=development) runs the Inter dialect with a development CA the sandbox makes on
 * its first start and keeps across starts; elsewhere the dialect runs only with TLS files.
 */

describe('when the Inter dialect runs', () => {
  it('in development (NODE_ENV=development) without TLS files: on 3101, with the CA in DEV_INTER_SANDBOX_DIR', () => {
    const config = loadBankSandboxConfig({ NODE_ENV: 'development' });
    expect(config.inter).toMatchObject({ port: DEV_INTER_SANDBOX_PORT, tls: null, devCaDir: DEV_INTER_SANDBOX_DIR });
    expect(config.inter.httpWebhooks).toBe(true);
    expect(config.inter.noticeRetryMs).toEqual([1_200_000, 1_800_000, 3_600_000, 7_200_000]);
  });

  it('not under jest (NODE_ENV=test) nor in production without TLS files; production refuses http webhooks', () => {
    expect(loadBankSandboxConfig({ NODE_ENV: 'test' }).inter.devCaDir).toBeNull();
    const production = loadBankSandboxConfig({
      NODE_ENV: 'production',
      BANK_SANDBOX_API_KEY: 'a-real-key-for-staging-0123456789',
      BANK_SANDBOX_WEBHOOK_SECRET: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0',
    }).inter;
    expect(production).toMatchObject({ tls: null, devCaDir: null, httpWebhooks: false });
    expect(() => loadBankSandboxConfig({ BANK_SANDBOX_INTER_TLS_CA_KEY_FILE: '/x' })).toThrow(
      /BANK_SANDBOX_INTER_TLS_CA_FILE/,
    );
  });
});

describe('the development CA', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inter-dev-ca-'));
  let database: { url: string; drop: () => Promise<void> };
  let sandbox: RunningBankSandbox;
  const logger = createLogger('bank-sandbox', process.env.TEST_LOG_LEVEL ?? 'silent');
  const start = async () => {
    const config = loadBankSandboxConfig({
      DATABASE_URL: database.url,
      BANK_SANDBOX_PORT: '0',
      BANK_SANDBOX_INTER_PORT: '0',
    });
    // What NODE_ENV=development gives, in a directory of this test's own.
    config.inter.devCaDir = join(dir, 'bank-sandbox-inter');
    return startBankSandbox(config, logger);
  };

  beforeAll(async () => {
    database = await createMigratedTestDatabase(SCHEMA, migrations);
    sandbox = await start();
  });
  afterAll(async () => {
    await sandbox.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is made on the first start, kept across starts, and signs the integrations', async () => {
    expect(sandbox.inter?.caFile).toBe(join(dir, 'bank-sandbox-inter', 'ca.pem'));
    const caPem = readFileSync(join(dir, 'bank-sandbox-inter', 'ca.pem'), 'utf8');
    const serverPem = readFileSync(join(dir, 'bank-sandbox-inter', 'server.pem'), 'utf8');
    const server = new X509Certificate(serverPem);
    expect(server.verify(new X509Certificate(caPem).publicKey)).toBe(true);
    expect(server.subjectAltName).toContain('DNS:localhost');
    expect(server.subjectAltName).toContain('IP Address:127.0.0.1');

    const made = await control(sandbox.url, 'POST', '/sandbox/inter/integrations');
    expect(made.status).toBe(201);
    const integration = made.body as unknown as TestIntegration;

    await sandbox.stop();
    sandbox = await start();
    expect(readFileSync(join(dir, 'bank-sandbox-inter', 'ca.pem'), 'utf8')).toBe(caPem);
    expect(readFileSync(join(dir, 'bank-sandbox-inter', 'server.pem'), 'utf8')).toBe(serverPem);
    // The integration handed out before the restart still logs in, trusting the kept CA.
    const client = new InterTestClient(sandbox.inter!.baseUrl, caPem, integration);
    try {
      expect((await client.login()).status).toBe(200);
    } finally {
      await client.close();
    }
  });
});
