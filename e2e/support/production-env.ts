import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { DEV_CREDENTIALS_ENCRYPTION_KEY } from '@payments/credential-seal';
export { loginCheckingNats, type LoginCheckingNats } from './private-nats';

/**
 * NODE_ENV=production with a fresh, non-default value for every secret production requires of every
 * app (docs/configuration.md, Production): a system started with it gets past every refusal. The bank
 * sandbox and receivables-svc share their API key and webhook secret. Tenants a test creates in-process
 * are sealed in the test process's (development) mode: the development key stays a previous key that
 * opens them.
 *
 * A production app also refuses a NATS server that lets a wrong password in, as the shared test server
 * does: give it `bus`, the environment of loginCheckingNats() (NATS_URL, NATS_USER, NATS_PASSWORD).
 */
export function productionEnv(bus: Record<string, string> = {}): Record<string, string> {
  const providerApiKey = randomBytes(16).toString('hex');
  const providerWebhookSecret = randomBytes(32).toString('hex');
  return {
    NODE_ENV: 'production',
    JWT_PRIVATE_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    DOWNLOAD_LINK_SECRET: randomBytes(32).toString('hex'),
    CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    CREDENTIALS_PREVIOUS_KEYS: DEV_CREDENTIALS_ENCRYPTION_KEY,
    PROVIDER_API_KEY: providerApiKey,
    BANK_SANDBOX_API_KEY: providerApiKey,
    PROVIDER_WEBHOOK_SECRET: providerWebhookSecret,
    BANK_SANDBOX_WEBHOOK_SECRET: providerWebhookSecret,
    // Banks reach receivables-svc's webhooks only over https: production refuses anything else.
    RECEIVABLES_PUBLIC_URL: 'https://webhooks.payments.example.com',
    NATS_USER: 'e2e',
    NATS_PASSWORD: randomBytes(16).toString('hex'),
    ...bus,
  };
}
