/**
 * Provider accounts: the bank account (at the sandbox or a real bank) into which one tenant is paid,
 * with the beneficiary printed on its slips and PIX codes. The gateway owns them (beside tenants; the
 * admin CLI sets them); each version is immutable, and a receivable keeps the version it was accepted
 * under. Credentials travel and rest sealed (libs/credential-seal); only receivables-svc, which calls
 * the bank, opens them.
 */

/**
 * sandbox: the bank sandbox's own API. inter: Banco Inter (slips through its Cobrança API, PIX charges
 * through its PIX API). pix: any other bank's PIX API on the Central Bank's standard, PIX charges only.
 */
export const ProviderKinds = ['sandbox', 'inter', 'pix'] as const;
export type ProviderKind = (typeof ProviderKinds)[number];

/** Who is paid: printed on slips, booklets and (name, city, key) in the PIX BR Code. */
export interface Beneficiary {
  name: string;
  /** CNPJ or CPF, as the operator gave it. */
  tax_id: string;
  city: string | null;
  /** PIX key of the account (the sandbox's own key when null). */
  pix_key: string | null;
  agency: string | null;
  account: string | null;
  address: string | null;
}

/** One immutable version of a tenant's provider account, as the gateway hands it to receivables-svc. */
export interface ProviderAccountVersion {
  /** Version id (UUID): a new one each time the operator sets the account. */
  account_id: string;
  tenant_id: string;
  provider: ProviderKind;
  /**
   * Which bank account this version reaches (a digest of provider, base URL and client id): versions
   * with the same key are the same account at the bank, so the newest one's credentials (a renewed
   * certificate) serve every open charge of it, while the beneficiary stays as each charge was accepted.
   */
  account_key: string;
  beneficiary: Beneficiary;
  /** The provider's API root for this account (null: the service's configured default for the kind). */
  base_url: string | null;
  /** ProviderCredentials as JSON, sealed with CREDENTIALS_ENCRYPTION_KEY; null when the kind needs none. */
  sealed_credentials: string | null;
}

/** receivables-svc -> gateway: the newest credentials of a tenant's bank account (by account_key). */
export interface ProviderCredentialsCommand {
  tenant_id: string;
  account_key: string;
}
export interface ProviderCredentialsReply {
  /** The version the credentials were sealed for (they open bound to this id). */
  account_id: string;
  sealed_credentials: string | null;
}

/** What an `inter` account's sealed credentials hold (PEM texts as read from the operator's files). */
export interface InterCredentials {
  client_id: string;
  client_secret: string;
  cert_pem: string;
  key_pem: string;
  /**
   * `tenant account ... --replace-webhook`: the bank's webhook may be pointed at us even when it is set
   * to another URL (the tenant's own). Absent: a webhook set elsewhere is left as it is.
   */
  replace_webhook?: boolean;
}
/**
 * What a `pix` account's sealed credentials hold: an OAuth2 client over mutual TLS, as for Inter, and
 * where its tokens are issued (the PIX API's root is the account's base_url).
 */
export interface PixCredentials extends InterCredentials {
  token_url: string;
}
export type ProviderCredentials = InterCredentials | PixCredentials;

/** The account as the admin CLI prints it: credentials only as "set" or "none". */
export interface ProviderAccountView {
  tenant_id: string;
  account_id: string;
  provider: ProviderKind;
  beneficiary: Beneficiary;
  base_url: string | null;
  credentials: 'set' | 'none';
  created_at: string;
}
