import { createHash } from 'node:crypto';
import type { RunMode } from '@payments/config';
import {
  ProviderKinds,
  type Beneficiary,
  type InterCredentials,
  type PixCredentials,
  type ProviderCredentials,
  type ProviderKind,
} from '@payments/contracts';
import { isValidTaxId } from '@payments/tax-id';
import { AdminError } from './admin-error';

/*
 * The rules of a provider account's settings: what an operator may give for each kind of account,
 * the development sandbox account, and the key that tells two bank accounts apart.
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

/* Checks ---------------------------------------------------------------------------------------- */

export interface CheckedAccount {
  provider: ProviderKind;
  beneficiary: Beneficiary;
  baseUrl: string | null;
  credentials: ProviderCredentials | null;
}

const MAX_TEXT = 200;
const MAX_URL = 2000;
/** A PIX key is at most 77 characters (a random key is 36, an e-mail up to 77). */
const MAX_PIX_KEY = 77;

/** The operator's input checked: what setProviderAccount stores, or a ProviderAccountInputError naming the flag. */
export function checkProviderAccountInput(input: ProviderAccountInput): CheckedAccount {
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
