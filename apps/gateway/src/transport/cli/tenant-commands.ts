import type { RunMode } from '@payments/config';
import { SIGNING_SECRET_MAX_AGE_MS, type ProviderAccountView } from '@payments/contracts';
import type { ProviderAccountInput } from '../../domain/tenancy/provider-account-input';
import {
  loadCredentialsKeyring,
  setProviderAccount,
  showProviderAccount,
} from '../../domain/tenancy/provider-accounts';
import { MAX_OVERLAP_HOURS, rotateSigningSecret } from '../../domain/tenancy/signing-secrets';
import { AdminError, createTenant, disableTenant, listTenants } from '../../domain/tenancy/tenant-admin';
import { ACCOUNT_FLAGS, type Commands, type Options } from './command';
import { readSecretFiles, UsageError } from './secret-files';

/** `tenant create|list|disable|account|rotate-secret`. */
export const TENANT_COMMANDS: Commands = [
  [
    'tenant create',
    async ({ db, mode, options, operator, print }) => {
      if (!options.name)
        throw new AdminError('tenant create needs --name: npm run admin -- tenant create --name <name> [--json]');
      const by = operator();
      const t = await createTenant(db, options.name, {
        mode,
        keyring: loadCredentialsKeyring(process.env, mode),
        by,
      });
      // In production the tenant cannot charge yet: say what comes next.
      const next =
        mode === 'production'
          ? `\nIt has no provider account yet (charges get 422 no_provider_account): npm run admin -- tenant account --tenant ${t.tenant_id} --provider sandbox|inter|pix ...`
          : '';
      print(
        `tenant_id:          ${t.tenant_id}\nintegration_token:  ${t.integration_token}\nsigning_secret:     ${t.signing_secret}\n(token id ${t.token_id}) Store the token and the secret now: they are not shown again.${next}`,
        {
          tenant_id: t.tenant_id,
          integration_token: t.integration_token,
          signing_secret: t.signing_secret,
          token_id: t.token_id,
          name: t.name,
        },
      );
    },
  ],
  [
    'tenant list',
    async ({ db, print }) => {
      const rows = await listTenants(db);
      print(
        rows.map((r) => `${r.tenant_id}  ${r.status.padEnd(8)}  tokens=${r.active_tokens}  ${r.name}`).join('\n') ||
          '(no tenants)',
        rows,
      );
    },
  ],
  [
    'tenant disable',
    async ({ db, target, operator, print }) => {
      if (!target) throw new AdminError('tenant disable needs a tenant id');
      await disableTenant(db, target, operator());
      print(`tenant ${target} disabled`, { tenant_id: target, status: 'disabled' });
    },
  ],
  [
    'tenant account',
    async ({ db, mode, options, operator, print }) => {
      if (!options.tenant)
        throw new AdminError(
          'tenant account needs --tenant: npm run admin -- tenant account --tenant <tenant_id> [--provider sandbox|inter|pix ...] [--json]',
        );
      const setting =
        ACCOUNT_FLAGS.some((flag) => options[flag] !== undefined) || options['replace-webhook'] !== undefined;
      const view = setting
        ? await setProviderAccount(
            db,
            options.provider === 'inter' || options.provider === 'pix'
              ? loadCredentialsKeyring(process.env, mode)
              : undefined,
            accountInput(options.tenant, options, mode),
            operator(),
          )
        : await showProviderAccount(db, options.tenant);
      const note = slipsOnlyNote(view);
      if (note && options.json) console.error(`note: ${note}`);
      print(note ? `${describeAccount(view)}\nnote: ${note}` : describeAccount(view), view);
    },
  ],
  [
    'tenant rotate-secret',
    async ({ db, mode, options, operator, print }) => {
      if (!options.tenant)
        throw new AdminError(
          'tenant rotate-secret needs --tenant: npm run admin -- tenant rotate-secret --tenant <tenant_id> [--overlap-hours 24] [--json]',
        );
      const by = operator();
      const r = await rotateSigningSecret(
        db,
        loadCredentialsKeyring(process.env, mode),
        options.tenant,
        overlapHours(options['overlap-hours']),
        by,
      );
      // callback-svc reuses what it was told for at most this long: once it has passed, the next
      // callback from any instance is signed with the new secret, so the command ends only then.
      await new Promise((resolve) => setTimeout(resolve, SIGNING_SECRET_MAX_AGE_MS + 100));
      print(
        `tenant_id:             ${r.tenant_id}\nsigning_secret:        ${r.signing_secret}\nprevious_valid_until:  ${r.previous_valid_until}\nStore the secret now: it is not shown again. Until previous_valid_until every callback carries both signatures.`,
        r,
      );
    },
  ],
];

/** --overlap-hours: a non-negative decimal number of hours, 24 when not given. */
function overlapHours(value: string | undefined): number {
  if (value === undefined) return 24;
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) > MAX_OVERLAP_HOURS)
    throw new UsageError(`--overlap-hours must be a number of hours from 0 to ${MAX_OVERLAP_HOURS} (e.g. 24, 0.5, 0)`);
  return Number(value);
}

/** The flags as `tenant account` takes them, the secrets read from their files (or stdin). */
function accountInput(tenantId: string, options: Options, mode: RunMode): ProviderAccountInput {
  const secrets = readSecretFiles({
    'client-secret-file': options['client-secret-file'],
    'cert-file': options['cert-file'],
    'key-file': options['key-file'],
  });
  const clientFlags = [
    options['client-id'],
    options['replace-webhook'],
    options['token-url'],
    ...Object.values(secrets),
  ].some((v) => v !== undefined);
  return {
    tenantId,
    provider: options.provider ?? '',
    beneficiary: {
      name: options['beneficiary-name'],
      taxId: options['beneficiary-tax-id'],
      city: options['beneficiary-city'],
      pixKey: options['pix-key'],
      agency: options.agency,
      account: options.account,
    },
    baseUrl: options['base-url'],
    pixApiUrl: options['pix-api-url'],
    credentials:
      options.provider === 'inter' || options.provider === 'pix' || clientFlags
        ? {
            client_id: options['client-id'],
            client_secret: secrets['client-secret-file'],
            cert_pem: secrets['cert-file'],
            key_pem: secrets['key-file'],
            ...(options['token-url'] === undefined ? {} : { token_url: options['token-url'] }),
            ...(options['replace-webhook'] ? { replace_webhook: true } : {}),
          }
        : undefined,
    mode,
  };
}

/** An inter account without a PIX key is allowed, but what it cannot do is said at once. */
function slipsOnlyNote(a: ProviderAccountView): string | undefined {
  if (a.provider !== 'inter' || a.beneficiary.pix_key !== null) return undefined;
  return 'no --pix-key: this inter account issues slips only; PIX charges (payment_method 3) get 422 pix_key_required';
}

/** The account for a person: what the JSON says, credentials only as set/none. */
function describeAccount(a: ProviderAccountView): string {
  const b = a.beneficiary;
  const field = (label: string, value: string | null) => `${`${label}:`.padEnd(20)}${value ?? '-'}`;
  return [
    field('tenant_id', a.tenant_id),
    field('account_id', a.account_id),
    field('provider', a.provider),
    field('beneficiary', b.name),
    field('  tax_id', b.tax_id),
    field('  city', b.city),
    field('  pix_key', b.pix_key),
    field('  agency', b.agency),
    field('  account', b.account),
    field('base_url', a.base_url ?? "(the service's default)"),
    field('credentials', a.credentials),
    field('created_at', a.created_at),
  ].join('\n');
}
