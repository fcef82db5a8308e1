import { randomBytes, randomUUID } from 'node:crypto';
import { seal } from '@payments/credential-seal';
import type { PixCredentials } from '@payments/contracts';
import type { ProviderAccount } from '../src/domain/ports';
import { CredentialsUnavailableError, InterCredentialSource } from '../src/transport/providers/credentials';

/**
 * A `pix` account's sealed credentials are PixCredentials: the Inter fields plus where its tokens are
 * issued (token_url). Without a usable token_url the account is not called, and the refusal names the
 * account, never the secret.
 */

const key = randomBytes(32);
const credentials: PixCredentials = {
  client_id: 'pix-client',
  client_secret: 'very-secret',
  cert_pem: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n',
  key_pem: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n',
  token_url: 'https://pix.bank.example/oauth/token',
};

function account(provider: ProviderAccount['provider'], stored: object): ProviderAccount {
  const id = randomUUID();
  return {
    id,
    tenantId: randomUUID(),
    provider,
    accountKey: `key-${id}`,
    beneficiary: { name: 'X', tax_id: '1', city: null, pix_key: 'k', agency: null, account: null, address: null },
    baseUrl: 'https://pix.bank.example/api/v2',
    sealedCredentials: seal(key, JSON.stringify(stored), id),
  };
}

const source = new InterCredentialSource(key, () => Promise.resolve(null));

it("opens a pix account's credentials with their token URL", async () => {
  const pix = account('pix', credentials);
  expect(await source.credentialsFor(pix)).toEqual({ versionId: pix.id, credentials });
});

it('refuses a pix account whose credentials have no usable token URL, without quoting the secret', async () => {
  const { token_url: _url, ...interShaped } = credentials;
  for (const stored of [
    interShaped,
    { ...credentials, token_url: 'not a url' },
    { ...credentials, token_url: 'ftp://x' },
  ]) {
    const pix = account('pix', stored);
    const error = await source.credentialsFor(pix).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(CredentialsUnavailableError);
    expect((error as Error).message).toContain(pix.id);
    expect((error as Error).message).not.toMatch(/very-secret|PRIVATE KEY/);
  }
});

it('an inter account needs no token URL (Inter derives it from its base URL)', async () => {
  const { token_url: _url, ...interShaped } = credentials;
  const inter = account('inter', interShaped);
  expect((await source.credentialsFor(inter)).credentials).toEqual(interShaped);
});
