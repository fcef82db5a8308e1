import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { RunMode } from '@payments/config';
import {
  isUuid,
  ProviderKinds,
  type Beneficiary,
  type InterCredentials,
  type PixCredentials,
  type ProviderAccountVersion,
  type ProviderAccountView,
  type ProviderCredentials,
  type ProviderKind,
} from '@payments/contracts';
import { CredentialSealError, keyringFromEnv, seal, type Keyring } from '@payments/credential-seal';
import { isValidTaxId } from '@payments/tax-id';
import type { GatewayDatabase, ProviderAccountsTable } from '../db/schema';
import { AdminError, AdminNotFoundError } from './admin-error';
import { CALLED_FROM_CODE, recordAdminAction, type AuditedBy } from './admin-audit';

/**
 * Each tenant's provider account: which provider registers its charges, with which
 * credentials, paying which beneficiary. Versions are immutable rows: setting an account supersedes
 * the current row and inserts a new one in one transaction, so a charge accepted earlier keeps the
 * version it was accepted under (receivables-svc gets the whole version with each create command).
 */

/** The bank sandbox's default payee CNPJ: what development accounts print until an operator sets one. */
export const DEVELOPMENT_PAYEE_TAX_ID = '11.222.333/0001-81';
export const DEVELOPMENT_PAYEE_CITY = 'Sao Paulo';

/** A refused account, naming the CLI flag at fault. */
export class ProviderAccountInputError extends AdminError {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the operator gives (the admin CLI's flags); every field is checked by setProviderAccount. */
export interface ProviderAccountInput {
  tenantId: string;
  provider: string;
  beneficiary: {
    name?: string;
    taxId?: string;
    city?: string;
    pixKey?: string;
    agency?: string;
    account?: string;
  };
  /** inter only (--base-url). */
  baseUrl?: string;
  /** pix only, and required there (--pix-api-url): the bank's PIX API root, stored as the account's base_url. */
  pixApiUrl?: string;
  /** inter and pix: the four of InterCredentials required; pix also token_url (--token-url). */
  credentials?: Partial<PixCredentials>;
  /**
   * How strict the URLs are: production takes only https ones for a pix account (its secret and
   * certificate go there); development takes http too, for a bank's sandbox. Production when absent.
   */
  mode?: RunMode;
}

/** The sandbox account a development tenant gets: paid to the tenant's name at the sandbox's payee CNPJ. */
export function developmentBeneficiary(tenantName: string): Beneficiary {
  return {
    name: tenantName,
    tax_id: DEVELOPMENT_PAYEE_TAX_ID,
    city: DEVELOPMENT_PAYEE_CITY,
    pix_key: null,
    agency: null,
    account: null,
    address: null,
  };
}

/** Gives a new tenant the development sandbox account (inside createTenant's transaction). */
export async function insertDevelopmentAccount(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  tenantName: string,
): Promise<void> {
  await db
    .insertInto('provider_accounts')
    .values({
      id: randomUUID(),
      tenant_id: tenantId,
      provider: 'sandbox',
      account_key: providerAccountKey('sandbox', null, null),
      beneficiary: JSON.stringify(developmentBeneficiary(tenantName)),
      base_url: null,
      sealed_credentials: null,
    })
    .execute();
}

/**
 * Development start: every tenant without a current account gets the sandbox one (tenants created
 * before accounts existed). One statement; the partial unique index makes concurrent gateways harmless.
 * Returns how many tenants got one.
 */
export async function ensureDevelopmentAccounts(db: Kysely<GatewayDatabase>): Promise<number> {
  const template = JSON.stringify(developmentBeneficiary(''));
  const result = await sql`
    insert into provider_accounts (id, tenant_id, provider, account_key, beneficiary)
    select gen_random_uuid(), t.id, 'sandbox', ${providerAccountKey('sandbox', null, null)}, jsonb_set(${template}::jsonb, '{name}', to_jsonb(t.name))
    from tenants t
    where not exists (select 1 from provider_accounts p where p.tenant_id = t.id and p.superseded_at is null)
    on conflict (tenant_id) where superseded_at is null do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The tenant's current account version (one indexed row), or undefined when it has none. */
export async function currentProviderAccount(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
): Promise<ProviderAccountVersion | undefined> {
  const row = await db
    .selectFrom('provider_accounts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
  return row && toVersion(row);
}

/** The current account as the CLI shows it; an unknown tenant or one without an account is an AdminError. */
export async function showProviderAccount(db: Kysely<GatewayDatabase>, tenantId: string): Promise<ProviderAccountView> {
  await requireTenant(db, tenantId);
  const row = await db
    .selectFrom('provider_accounts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
  if (!row)
    throw new AdminNotFoundError(
      `tenant ${tenantId} has no provider account: set one with npm run admin -- tenant account --tenant ${tenantId} --provider sandbox|inter|pix ...`,
    );
  return toView(row);
}

/**
 * Sets the tenant's account: checks the input, supersedes the current version and inserts the new
 * one (credentials sealed, bound to its id). `credentialsKey` is needed only for `inter` and `pix`.
 */
export async function setProviderAccount(
  db: Kysely<GatewayDatabase>,
  credentialsKey: Buffer | Keyring | undefined,
  input: ProviderAccountInput,
  by: AuditedBy = CALLED_FROM_CODE,
): Promise<ProviderAccountView> {
  const account = checkInput(input);
  if (account.credentials && !credentialsKey)
    throw new AdminError(`CREDENTIALS_ENCRYPTION_KEY is needed to store ${account.provider} credentials`);
  const id = randomUUID();
  const sealed = account.credentials ? seal(credentialsKey!, JSON.stringify(account.credentials), id) : null;
  return db.transaction().execute(async (trx) => {
    // Locks the tenant: two operators setting it at once take turns instead of both superseding one row.
    await requireTenant(trx, input.tenantId, true);
    await trx
      .updateTable('provider_accounts')
      .set({ superseded_at: sql<Date>`now()` })
      .where('tenant_id', '=', input.tenantId)
      .where('superseded_at', 'is', null)
      .execute();
    const row = await trx
      .insertInto('provider_accounts')
      .values({
        id,
        tenant_id: input.tenantId,
        provider: account.provider,
        account_key: providerAccountKey(account.provider, account.baseUrl, account.credentials?.client_id ?? null),
        beneficiary: JSON.stringify(account.beneficiary),
        base_url: account.baseUrl,
        sealed_credentials: sealed,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    // Settings only: the credentials are recorded as set or none, like the CLI shows them.
    await recordAdminAction(trx, by, 'tenant.account', input.tenantId, {
      account_id: row.id,
      provider: row.provider,
      beneficiary_name: account.beneficiary.name,
      beneficiary_tax_id: account.beneficiary.tax_id,
      base_url: row.base_url,
      pix_key: account.beneficiary.pix_key,
      // A pix account's token URL is a setting, not a secret, though it is sealed with the client.
      ...(account.credentials && 'token_url' in account.credentials
        ? { token_url: account.credentials.token_url }
        : {}),
      credentials: row.sealed_credentials === null ? 'none' : 'set',
    });
    return toView(row);
  });
}

/**
 * CREDENTIALS_ENCRYPTION_KEY (32 bytes, base64), which seals inter credentials. Development falls back
 * to the public DEV_CREDENTIALS_ENCRYPTION_KEY; production refuses a missing key and that default.
 */
export function loadCredentialsKey(env: Record<string, string | undefined>, mode: RunMode): Buffer {
  return loadCredentialsKeyring(env, mode).current.key;
}

/** The keyring of CREDENTIALS_ENCRYPTION_KEY and CREDENTIALS_PREVIOUS_KEYS; what is wrong with them is an AdminError. */
export function loadCredentialsKeyring(env: Record<string, string | undefined>, mode: RunMode): Keyring {
  try {
    return keyringFromEnv(env, mode);
  } catch (err) {
    if (err instanceof CredentialSealError) throw new AdminError(err.message);
    throw err;
  }
}

/* Checks ---------------------------------------------------------------------------------------- */

interface CheckedAccount {
  provider: ProviderKind;
  beneficiary: Beneficiary;
  baseUrl: string | null;
  credentials: ProviderCredentials | null;
}

const MAX_TEXT = 200;
const MAX_URL = 2000;
/** A PIX key is at most 77 characters (a random key is 36, an e-mail up to 77). */
const MAX_PIX_KEY = 77;

function checkInput(input: ProviderAccountInput): CheckedAccount {
  const provider = input.provider;
  if (provider === '')
    throw new ProviderAccountInputError(
      '--provider',
      `--provider is required to set an account (${ProviderKinds.join(' or ')})`,
    );
  if (!(ProviderKinds as readonly string[]).includes(provider))
    throw new ProviderAccountInputError('--provider', `--provider must be one of ${ProviderKinds.join(', ')}`);
  const b = input.beneficiary;
  const name = required('--beneficiary-name', b.name);
  const taxId = required('--beneficiary-tax-id', b.taxId);
  if (!isValidTaxId(taxId))
    throw new ProviderAccountInputError(
      '--beneficiary-tax-id',
      '--beneficiary-tax-id must be a valid CNPJ or CPF (check digits; punctuation optional)',
    );
  const beneficiary: Beneficiary = {
    name,
    tax_id: taxId,
    city: optional('--beneficiary-city', b.city),
    pix_key: optional('--pix-key', b.pixKey, MAX_PIX_KEY),
    agency: optional('--agency', b.agency),
    account: optional('--account', b.account),
    address: null,
  };
  if (provider === 'sandbox') {
    refuseFlags(input, [...CREDENTIAL_FLAGS, ...INTER_FLAGS, ...PIX_FLAGS]);
    return { provider, beneficiary, baseUrl: null, credentials: null };
  }
  if (provider === 'pix') return checkPixAccount(input, beneficiary);
  refuseFlags(input, PIX_FLAGS);
  return {
    provider: 'inter',
    beneficiary,
    baseUrl: input.baseUrl === undefined ? null : checkUrl('--base-url', input.baseUrl, 'development'),
    credentials: checkInterCredentials(input.credentials ?? {}, 'Inter'),
  };
}

/**
 * A `pix` account: PIX charges only, issued to its PIX key, through the PIX API at --pix-api-url with
 * tokens from --token-url (both https in production).
 */
function checkPixAccount(input: ProviderAccountInput, beneficiary: Beneficiary): CheckedAccount {
  refuseFlags(input, INTER_FLAGS);
  const mode = input.mode ?? 'production';
  const pixApiUrl = checkUrl('--pix-api-url', required('--pix-api-url', input.pixApiUrl, MAX_URL), mode);
  const credentials = checkInterCredentials(input.credentials ?? {}, 'the bank');
  const tokenUrl = checkUrl('--token-url', required('--token-url', input.credentials?.token_url, MAX_URL), mode);
  if (beneficiary.pix_key === null)
    throw new ProviderAccountInputError(
      '--pix-key',
      '--pix-key is required for --provider pix (the key its PIX charges are issued to)',
    );
  return {
    provider: 'pix',
    beneficiary,
    baseUrl: pixApiUrl,
    credentials: { ...credentials, token_url: tokenUrl },
  };
}

/** A flag of some kinds of account: its name, its value in the input, and the kinds that take it. */
type KindFlag = [flag: string, of: (input: ProviderAccountInput) => unknown, kinds: string];
/** What a sandbox account never takes: a bank's client and its files. */
const CREDENTIAL_FLAGS: KindFlag[] = [
  ['--client-id', (i) => i.credentials?.client_id, 'inter or pix'],
  ['--client-secret-file', (i) => i.credentials?.client_secret, 'inter or pix'],
  ['--cert-file', (i) => i.credentials?.cert_pem, 'inter or pix'],
  ['--key-file', (i) => i.credentials?.key_pem, 'inter or pix'],
  ['--replace-webhook', (i) => i.credentials?.replace_webhook, 'inter or pix'],
];
const INTER_FLAGS: KindFlag[] = [['--base-url', (i) => i.baseUrl, 'inter (a pix account takes --pix-api-url)']];
const PIX_FLAGS: KindFlag[] = [
  ['--pix-api-url', (i) => i.pixApiUrl, 'pix (an inter account takes --base-url)'],
  ['--token-url', (i) => i.credentials?.token_url, 'pix'],
];

/** Flags of other kinds of account, refused (they would be ignored). */
function refuseFlags(input: ProviderAccountInput, flags: KindFlag[]): void {
  const given = flags.find(([, of]) => of(input) !== undefined);
  if (given) throw new ProviderAccountInputError(given[0], `${given[0]} is only for --provider ${given[2]}`);
}

/** The client of a bank's API over mutual TLS (an inter account's, and a pix account's but its token URL). */
function checkInterCredentials(c: Partial<InterCredentials>, bank: string): InterCredentials {
  const credentials = {
    client_id: required('--client-id', c.client_id),
    client_secret: required('--client-secret-file', c.client_secret, Infinity),
    // PEM texts as read: only the secret loses the newline its file ends with.
    cert_pem: present('--cert-file', c.cert_pem),
    key_pem: present('--key-file', c.key_pem),
    // Sealed with the credentials: receivables-svc reads it with the newest credentials of the bank account.
    ...(c.replace_webhook === true ? { replace_webhook: true } : {}),
  };
  // Only the shape is checked, and the messages never quote the files.
  if (!/-----BEGIN CERTIFICATE-----/.test(credentials.cert_pem))
    throw new ProviderAccountInputError(
      '--cert-file',
      `--cert-file must be a PEM certificate (-----BEGIN CERTIFICATE-----), the .crt ${bank} issues`,
    );
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(credentials.key_pem))
    throw new ProviderAccountInputError(
      '--key-file',
      `--key-file must be a PEM private key (-----BEGIN ... PRIVATE KEY-----), the .key ${bank} issues`,
    );
  return credentials;
}

/**
 * An API root or token URL: http(s), its trailing slashes dropped. Production takes https only where
 * `mode` says so (a pix account's URLs).
 */
function checkUrl(flag: string, value: string, mode: RunMode): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new ProviderAccountInputError(flag, `${flag} must be an http(s) URL`);
  if (mode === 'production' && url.protocol !== 'https:')
    throw new ProviderAccountInputError(flag, `${flag} must be an https URL in production`);
  return value.replace(/\/+$/, '');
}

function required(flag: string, value: string | undefined, max = MAX_TEXT): string {
  const trimmed = value?.trim();
  if (!trimmed) throw new ProviderAccountInputError(flag, `${flag} is required`);
  if (trimmed.length > max) throw new ProviderAccountInputError(flag, `${flag} has more than ${max} characters`);
  return trimmed;
}

/** A file's text as read, when it holds more than blanks. */
function present(flag: string, value: string | undefined): string {
  if (!value?.trim()) throw new ProviderAccountInputError(flag, `${flag} is required`);
  return value;
}

function optional(flag: string, value: string | undefined, max = MAX_TEXT): string | null {
  return value === undefined ? null : required(flag, value, max);
}

async function requireTenant(db: Kysely<GatewayDatabase>, tenantId: string, lock = false): Promise<void> {
  if (!isUuid(tenantId)) throw new ProviderAccountInputError('--tenant', `--tenant must be a tenant id (a UUID)`);
  let query = db.selectFrom('tenants').select('id').where('id', '=', tenantId);
  if (lock) query = query.forUpdate();
  if (!(await query.executeTakeFirst())) throw new AdminNotFoundError(`no tenant ${tenantId}`);
}

/* Rows ------------------------------------------------------------------------------------------ */

type Row = Selectable<ProviderAccountsTable>;

/** The columns a version is made of. */
export type ProviderAccountVersionRow = Pick<
  Row,
  'id' | 'tenant_id' | 'provider' | 'account_key' | 'beneficiary' | 'base_url' | 'sealed_credentials'
>;

/** The beneficiary in its documented field order (jsonb keeps its own). */
function beneficiaryOf(row: ProviderAccountVersionRow): Beneficiary {
  const b = row.beneficiary;
  return {
    name: b.name,
    tax_id: b.tax_id,
    city: b.city ?? null,
    pix_key: b.pix_key ?? null,
    agency: b.agency ?? null,
    account: b.account ?? null,
    address: b.address ?? null,
  };
}

export function toVersion(row: ProviderAccountVersionRow): ProviderAccountVersion {
  return {
    account_id: row.id,
    tenant_id: row.tenant_id,
    provider: row.provider,
    account_key: row.account_key,
    beneficiary: beneficiaryOf(row),
    base_url: row.base_url,
    sealed_credentials: row.sealed_credentials,
  };
}

function toView(row: Row): ProviderAccountView {
  return {
    tenant_id: row.tenant_id,
    account_id: row.id,
    provider: row.provider,
    beneficiary: beneficiaryOf(row),
    base_url: row.base_url,
    credentials: row.sealed_credentials === null ? 'none' : 'set',
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The bank account a version reaches: the same provider, API root and client id are the same account
 * (a renewed certificate or secret keeps the key). A digest, so the client id is not shown in clear.
 */
export function providerAccountKey(provider: ProviderKind, baseUrl: string | null, clientId: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([provider, baseUrl, clientId]))
    .digest('hex')
    .slice(0, 32);
}

/** The newest credentials sealed for one bank account of the tenant (the key of ProviderAccountVersion). */
export async function newestCredentials(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  accountKey: string,
): Promise<{ account_id: string; sealed_credentials: string | null } | undefined> {
  const row = await db
    .selectFrom('provider_accounts')
    .select(['id', 'sealed_credentials'])
    .where('tenant_id', '=', tenantId)
    .where('account_key', '=', accountKey)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && { account_id: row.id, sealed_credentials: row.sealed_credentials };
}
