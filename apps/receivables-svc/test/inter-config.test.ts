import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEV_INTER_SANDBOX_CA_FILE } from '@payments/config';
import { loadReceivablesConfig, trustedInterCa } from '../src/config';

/** receivables-svc's Inter settings: https in production, the sandbox's dialect in development, call limits. */
describe('Inter settings', () => {
  const production = {
    NODE_ENV: 'production',
    DOWNLOAD_LINK_SECRET: 'a-production-link-secret',
    CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PROVIDER_API_KEY: 'a-production-api-key',
    PROVIDER_WEBHOOK_SECRET: 'whsec_cHJvZHVjdGlvbi13ZWJob29rLXNlY3JldA==',
    NATS_USER: 'receivables-svc',
    NATS_PASSWORD: 'a-production-bus-password',
    RECEIVABLES_PUBLIC_URL: 'https://webhooks.payments.example.com',
  };
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

  it('production refuses a RECEIVABLES_PUBLIC_URL that is not https, naming it; Inter itself by default', () => {
    for (const url of ['http://webhooks.payments.example.com', undefined]) {
      const load = () => loadReceivablesConfig({ ...production, RECEIVABLES_PUBLIC_URL: url });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/RECEIVABLES_PUBLIC_URL/);
    }
    const config = loadReceivablesConfig(production);
    expect(config.inter.baseUrl).toBe('https://cdpj.partners.bancointer.com.br');
    expect(config.inter.trustedCaPem).toBeUndefined();
    // Development takes http (the sandbox accepts it).
    expect(loadReceivablesConfig({ RECEIVABLES_PUBLIC_URL: 'http://127.0.0.1:3200' }).publicUrl).toBe(
      'http://127.0.0.1:3200',
    );
  });

  it("development defaults to the sandbox's Inter dialect, reading its CA only at the first call", () => {
    const dir = mkdtempSync(join(tmpdir(), 'inter-config-'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const config = loadReceivablesConfig({ BANK_SANDBOX_INTER_PORT: '4101' });
      expect(config.inter.baseUrl).toBe('https://127.0.0.1:4101/inter');
      const ca = trustedInterCa(config.inter);
      if (typeof ca !== 'function') throw new Error('the development CA is not read lazily');
      // Not there yet (the sandbox creates it on its first start): the call fails, not the start.
      expect(() => ca()).toThrow(/INTER_TRUSTED_CA_FILE/);
      mkdirSync(join(dir, DEV_INTER_SANDBOX_CA_FILE, '..'), { recursive: true });
      writeFileSync(join(dir, DEV_INTER_SANDBOX_CA_FILE), pem);
      expect(ca()).toBe(pem);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an INTER_TRUSTED_CA_FILE set explicitly is read and checked at start', () => {
    expect(() => loadReceivablesConfig({ INTER_TRUSTED_CA_FILE: '/nonexistent/ca.pem' })).toThrow(
      /INTER_TRUSTED_CA_FILE: cannot read/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'inter-config-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), pem);
      expect(loadReceivablesConfig({ INTER_TRUSTED_CA_FILE: join(dir, 'ca.pem') }).inter.trustedCaPem).toBe(pem);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("INTER_CALL_LIMITS changes Inter's published limits per endpoint; anything else is refused", () => {
    const { callLimits, callWaitMaxMs } = loadReceivablesConfig({ INTER_CALL_LIMITS: 'create=60, webhook=2' }).inter;
    expect(callLimits).toMatchObject({ create: 60, webhook: 2, consult: 120, list: 120, token: 5, callbacks: 10 });
    expect(callWaitMaxMs).toBe(30_000);
    for (const bad of ['create', 'nothing=5', 'create=0', 'create=-1'])
      expect(() => loadReceivablesConfig({ INTER_CALL_LIMITS: bad })).toThrow(/INTER_CALL_LIMITS/);
  });
});
