import { isValidCnpj } from '@payments/tax-id';
import { loadBankSandboxConfig } from '../src';

it('has defaults that work on a developer machine', () => {
  const config = loadBankSandboxConfig({});
  expect(config).toMatchObject({
    databaseUrl: 'postgres://postgres@127.0.0.1:5432/receivables',
    databasePoolSize: 10,
    port: 3100,
    publicUrl: undefined,
    apiKey: 'sandbox-api-key',
    slowMs: 3000,
    mode: 'normal',
    account: {
      bankCode: '999',
      agency: '0001',
      wallet: '09',
      account: '0123456',
      pix: { merchantName: 'PAYMENTS SANDBOX LTDA', merchantCity: 'SAO PAULO' },
    },
    webhook: {
      url: 'http://127.0.0.1:3200/provider/webhooks/bank-sandbox',
      secret: 'sandbox-webhook-secret',
      retryMs: [500, 2000, 5000, 15000, 60000],
    },
  });
  expect(isValidCnpj(config.payee.taxId)).toBe(true);
});

it('reads every setting, and normalises the PIX merchant text', () => {
  const config = loadBankSandboxConfig({
    BANK_SANDBOX_PORT: '0',
    BANK_SANDBOX_PUBLIC_URL: 'https://bank.example.test/',
    BANK_SANDBOX_BANK_CODE: '123',
    BANK_SANDBOX_PIX_MERCHANT_NAME: 'Padaria São João',
    BANK_SANDBOX_PIX_MERCHANT_CITY: 'Florianópolis',
    BANK_SANDBOX_MODE: 'down',
    BANK_SANDBOX_WEBHOOK_RETRY_MS: '10,20',
    DATABASE_POOL_SIZE: '2',
  });
  expect(config.port).toBe(0);
  expect(config.databasePoolSize).toBe(2);
  expect(config.publicUrl).toBe('https://bank.example.test');
  expect(config.account.bankCode).toBe('123');
  expect(config.account.pix).toMatchObject({ merchantName: 'PADARIA SAO JOAO', merchantCity: 'FLORIANOPOLIS' });
  expect(config.mode).toBe('down');
  expect(config.webhook.retryMs).toEqual([10, 20]);
});

it('names the variable that is unusable', () => {
  expect(() => loadBankSandboxConfig({ BANK_SANDBOX_BANK_CODE: '99' })).toThrow(/BANK_SANDBOX_BANK_CODE/);
  expect(() => loadBankSandboxConfig({ BANK_SANDBOX_PIX_MERCHANT_CITY: 'Vila Nova de Gaia do Sul' })).toThrow(
    /BANK_SANDBOX_PIX_MERCHANT_CITY/,
  );
  expect(() => loadBankSandboxConfig({ BANK_SANDBOX_MODE: 'sleepy' })).toThrow(/BANK_SANDBOX_MODE/);
});
