import type { ProviderAccount } from '../../domain/ports';

/**
 * The account of receivables accepted before provider accounts existed (provider_account_id null):
 * they were registered with the bank sandbox, under no account, paid to the sandbox's own default
 * payee. The sandbox adapter sends no beneficiary and no account reference for it, so the sandbox
 * keeps applying its defaults; the beneficiary below is never sent nor shown (such installments have
 * no payee). The nil UUID cannot be a version id the gateway hands out (those are random).
 */
export const LEGACY_SANDBOX_ACCOUNT: ProviderAccount = Object.freeze({
  id: '00000000-0000-0000-0000-000000000000',
  tenantId: '00000000-0000-0000-0000-000000000000',
  provider: 'sandbox',
  accountKey: 'legacy-sandbox',
  beneficiary: Object.freeze({
    name: 'bank sandbox default payee',
    tax_id: '',
    city: null,
    pix_key: null,
    agency: null,
    account: null,
    address: null,
  }),
  baseUrl: null,
  sealedCredentials: null,
});

export function isLegacySandboxAccount(account: ProviderAccount): boolean {
  return account.id === LEGACY_SANDBOX_ACCOUNT.id;
}
