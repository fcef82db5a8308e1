import type { RunMode } from '@payments/config';
import type { AdminProviderAccountRequest, FieldError } from '@payments/contracts';
import type { ProviderAccountInput, ProviderAccountInputError } from '../../../domain/tenancy/provider-account-input';

/** The request body as the CLI's flags would give it (setProviderAccount checks every field). */
export function accountInput(tenantId: string, body: AdminProviderAccountRequest, mode: RunMode): ProviderAccountInput {
  const b = body.beneficiary;
  const text = (value: string | null | undefined) => value ?? undefined;
  return {
    tenantId,
    provider: body.provider,
    beneficiary: {
      name: b.name,
      taxId: b.tax_id,
      city: text(b.city),
      pixKey: text(b.pix_key),
      agency: text(b.agency),
      account: text(b.account),
    },
    // A pix account's base_url is its PIX API root (the CLI's --pix-api-url).
    ...(body.provider === 'pix' ? { pixApiUrl: body.base_url } : { baseUrl: body.base_url }),
    credentials: body.credentials,
    mode,
  };
}

/** Each CLI flag of a provider account, as the field of the request body. */
const FIELD_OF_FLAG: Record<string, string> = {
  '--provider': '/provider',
  '--beneficiary-name': '/beneficiary/name',
  '--beneficiary-tax-id': '/beneficiary/tax_id',
  '--beneficiary-city': '/beneficiary/city',
  '--pix-key': '/beneficiary/pix_key',
  '--agency': '/beneficiary/agency',
  '--account': '/beneficiary/account',
  '--base-url': '/base_url',
  '--pix-api-url': '/base_url',
  '--token-url': '/credentials/token_url',
  '--client-id': '/credentials/client_id',
  '--client-secret-file': '/credentials/client_secret',
  '--cert-file': '/credentials/cert_pem',
  '--key-file': '/credentials/key_pem',
  '--replace-webhook': '/credentials/replace_webhook',
};

export function fieldOfFlag(err: ProviderAccountInputError): FieldError {
  if (err.flag === '--tenant') return { in: 'path', path: 'tenant_id', message: 'must be a tenant id (a UUID)' };
  const path = FIELD_OF_FLAG[err.flag] ?? '';
  const message = err.message.startsWith(err.flag) ? err.message.slice(err.flag.length).trim() : err.message;
  return { path, message };
}
