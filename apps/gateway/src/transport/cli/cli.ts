import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { BusProvisionError, type Bus } from '@payments/bus';
import { developmentUnlessSet, loadCommonConfig, type CommonConfig, type RunMode } from '@payments/config';
import { SIGNING_SECRET_MAX_AGE_MS, type ProviderAccountView } from '@payments/contracts';
import type { GatewayDatabase } from '../../db/schema';
import { listAdminAudit, resolveOperator, type AuditedBy, type AuditEntry } from '../../domain/tenancy/admin-audit';
import { reencryptSecrets } from '../../domain/tenancy/reencrypt';
import { MAX_OVERLAP_HOURS, rotateSigningSecret } from '../../domain/tenancy/signing-secrets';
import { type ProviderAccountInput } from '../../domain/tenancy/provider-account-input';
import {
  loadCredentialsKeyring,
  setProviderAccount,
  showProviderAccount,
} from '../../domain/tenancy/provider-accounts';
import { openAdminDatabase } from '../../db/admin-database';
import { describeProvisioning, provisionFromConfig } from '../bus/bus-provision';
import {
  deadLetterId,
  describeDeadLetter,
  discardDeadLetter,
  listDeadLetters,
  openAdminBus,
  redriveDeadLetter,
} from '../bus/jobs';
import { INTEGRATION_TOKEN_PREFIX } from '../../domain/tenancy/credentials';
import { swallowedByNpm } from './npm-flags';
import { createOperator, listOperators, revokeOperator } from '../../domain/tenancy/operators';
import { PeopleConflictError } from '../../domain/people/errors';
import { inviteOperator } from '../../domain/people/invitations';
import { systemClock } from '../../domain/people/people';
import { readSecretFiles, refuseSecretsOnCommandLine, UsageError } from './secret-files';
import {
  AdminError,
  createTenant,
  disableTenant,
  issueToken,
  listTenants,
  listTokens,
  revokeToken,
} from '../../domain/tenancy/tenant-admin';

const USAGE = `Operator commands (npm run admin -- <command>):
  tenant create --name <name> [--json]   new tenant; prints its id, integration token and signing secret ONCE
                                         (in development it gets a sandbox provider account at once)
  tenant list [--json]                   tenants with their number of active tokens
  tenant disable <tenant_id>             refuse every token of a tenant from now on
  tenant account --tenant <tenant_id> [--json]   the tenant's provider account (credentials only as set/none)
  tenant account --tenant <tenant_id> --provider sandbox|inter|pix --beneficiary-name <name>
      --beneficiary-tax-id <cnpj or cpf> [--beneficiary-city <city>] [--pix-key <key>] [--agency <n>]
      [--account <n>] [--json]
      inter also: --client-id <id> --client-secret-file <file> --cert-file <file> --key-file <file>
      [--base-url <url>] [--replace-webhook]
                                         (without --pix-key an inter account issues slips only: PIX
                                         charges get 422 pix_key_required)
      pix (any bank's PIX API on the Central Bank's standard; PIX charges only):
      --pix-api-url <url> --token-url <url> --client-id <id> --client-secret-file <file>
      --cert-file <file> --key-file <file> --pix-key <key> [--replace-webhook]
                                         (https URLs in production; http too in development)
                                         (--replace-webhook: point the bank's webhook at us even when it
                                         is set to another URL; without it that URL is kept)
                                         sets it, for charges accepted from now on; secrets come only
                                         from files (- reads one of them from stdin)
  tenant rotate-secret --tenant <tenant_id> [--overlap-hours 24] [--json]
                                         a new signing secret, printed ONCE; until previous_valid_until
                                         callbacks carry the old signature too (hours may be fractional,
                                         0 ends the old secret at once)
  token create --tenant <tenant_id> [--json]   issue another integration token
  token list --tenant <tenant_id> [--json]
  token revoke <token_id>                JWTs issued from it stop working at once
  token revoke -                         the same, reading the token (or its id) from stdin
  secrets reencrypt [--json]             seal again with CREDENTIALS_ENCRYPTION_KEY every secret sealed with
                                         an older key (after a key rotation)
  audit [--tenant <tenant_id>] [--limit <n>] [--json]   who changed what, and when (oldest first)
  jobs dead [--limit <n>] [--json]       dead letters: jobs whose handler failed JOB_MAX_FAILURES times, or
                                         poison (id, stream, message id, last error, failures, when)
  jobs redrive <id>                      publish dead letter <id> again to its stream, and remove it
  jobs discard <id>                      remove dead letter <id> without publishing it (audited)
  operator create --name <name> [--json] an operator of the admin API (ADMIN_PORT); prints its credential ONCE
  operator list [--json]                 operators (credential hints only)
  operator revoke <operator_id>          its credential is refused from now on
  operator invite --email <e-mail> [--json]   a person's one-time console invitation; prints its link token ONCE
  bus provision [--json]                 create or raise every stream, durable consumer, the dead letters and
                                         every claim store of BUS_PREFIX, with STREAM_MAX_BYTES and
                                         STREAM_REPLICAS; never lowers them (a larger value is kept and said);
                                         prints what it created, raised, updated or left. Services only check
                                         these at start: npm start and the deploys run this first. Needs no
                                         database; logs in as the provisioning user (NATS_USER=admin)
Every change is audited under --operator <name> or ADMIN_OPERATOR (required in production).
Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/receivables);
  jobs: NATS_URL, BUS_PREFIX and the bus login (NATS_USER=admin-cli and NATS_PASSWORD, or NATS_CREDS);
  bus provision: NATS_URL, BUS_PREFIX, NATS_USER=admin and NATS_PASSWORD (or NATS_CREDS), NATS_TLS_*_FILE,
  STREAM_MAX_BYTES, STREAM_REPLICAS;
  CREDENTIALS_ENCRYPTION_KEY (32 bytes, base64) seals signing secrets and bank credentials: required in
  production; CREDENTIALS_PREVIOUS_KEYS: older keys, comma-separated, that still open what they sealed`;

interface Options {
  name?: string;
  /** operator invite: the e-mail the person signs in with. */
  email?: string;
  tenant?: string;
  operator?: string;
  'overlap-hours'?: string;
  limit?: string;
  json: boolean;
  help?: boolean;
  provider?: string;
  'beneficiary-name'?: string;
  'beneficiary-tax-id'?: string;
  'beneficiary-city'?: string;
  'pix-key'?: string;
  agency?: string;
  account?: string;
  'client-id'?: string;
  'client-secret-file'?: string;
  'cert-file'?: string;
  'key-file'?: string;
  'base-url'?: string;
  'pix-api-url'?: string;
  'token-url'?: string;
  'replace-webhook'?: boolean;
}

/** The flags that set a provider account (besides --tenant and --json): any of them means "set", none "show". */
const ACCOUNT_FLAGS = [
  'provider',
  'beneficiary-name',
  'beneficiary-tax-id',
  'beneficiary-city',
  'pix-key',
  'agency',
  'account',
  'client-id',
  'client-secret-file',
  'cert-file',
  'key-file',
  'base-url',
  'pix-api-url',
  'token-url',
] as const;

interface Command {
  db: Kysely<GatewayDatabase>;
  /** NODE_ENV's mode: what a new tenant gets, and whether a development credentials key will do. */
  mode: RunMode;
  options: Options;
  /** The positional argument after the action, if any. */
  target: string | undefined;
  /** Who runs a command that changes something (the audit); asked for only by those commands. */
  operator: () => AuditedBy;
  /** The bus, connected on first use (only the jobs commands need it). */
  bus: () => Promise<Bus>;
  /** Prints the human text, or the data as one JSON line with --json. */
  print: (human: string, data: unknown) => void;
}

/** Each command by `<resource> <action>`; it prints what it did or throws an AdminError for the operator. */
const COMMANDS = new Map<string, (command: Command) => Promise<void>>([
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
  [
    'token create',
    async ({ db, options, operator, print }) => {
      if (!options.tenant)
        throw new AdminError(
          'token create needs --tenant: npm run admin -- token create --tenant <tenant_id> [--json]',
        );
      const t = await issueToken(db, options.tenant, operator());
      print(
        `token_id:           ${t.token_id}\nintegration_token:  ${t.integration_token}\nStore it now: it is not shown again.`,
        t,
      );
    },
  ],
  [
    'token list',
    async ({ db, options, print }) => {
      if (!options.tenant)
        throw new AdminError('token list needs --tenant: npm run admin -- token list --tenant <tenant_id> [--json]');
      const rows = await listTokens(db, options.tenant);
      print(
        rows.map((r) => `${r.token_id}  ${r.token_hint}...  ${r.revoked_at ? 'revoked' : 'active'}`).join('\n') ||
          '(no tokens)',
        rows,
      );
    },
  ],
  [
    'token revoke',
    async ({ db, target, operator, print }) => {
      if (!target) throw new AdminError('token revoke needs a token id (or -, and the token on stdin)');
      const r = await revokeToken(db, revokeTarget(target), operator());
      print(`token ${r.token_id} of tenant ${r.tenant_id} revoked`, { ...r, revoked: true });
    },
  ],
  [
    'secrets reencrypt',
    async ({ db, mode, operator, print }) => {
      const r = await reencryptSecrets(db, loadCredentialsKeyring(process.env, mode), operator());
      print(
        `sealed again with key ${r.key_id}: ${r.signing_secrets} signing secrets, ${r.provider_credentials} provider credentials (${r.already_current} had it already)`,
        r,
      );
    },
  ],
  [
    'audit',
    async ({ db, options, print }) => {
      const rows = await listAdminAudit(db, { tenantId: options.tenant, limit: auditLimit(options.limit) });
      print(rows.map(describeAuditEntry).join('\n') || '(no audited actions)', rows);
    },
  ],
  [
    'operator create',
    async ({ db, options, operator, print }) => {
      if (!options.name)
        throw new AdminError('operator create needs --name: npm run admin -- operator create --name <name> [--json]');
      const o = await createOperator(db, options.name, operator());
      print(
        `operator_id:  ${o.operator_id}\nname:         ${o.name}\ncredential:   ${o.credential}\nStore the credential now: it is not shown again. Send it as Authorization: Bearer <credential> to the admin port (ADMIN_PORT).`,
        o,
      );
    },
  ],
  [
    'operator invite',
    async ({ db, mode, options, operator, print }) => {
      if (!options.email)
        throw new AdminError(
          'operator invite needs --email: npm run admin -- operator invite --email <e-mail> [--json]',
        );
      const deps = { db, keyring: loadCredentialsKeyring(process.env, mode), mode, clock: systemClock };
      const invitation = await inviteOperator(deps, { kind: 'operator', by: operator() }, options.email).catch(
        (err: unknown) => {
          if (err instanceof PeopleConflictError) throw new AdminError(err.message);
          throw err;
        },
      );
      print(
        `invitation for ${invitation.email} (operator), until ${invitation.expires_at}:\n` +
          `open <console>/invitations/${invitation.invitation_token}\n` +
          'The link is not shown again: give it to that person only.',
        invitation,
      );
    },
  ],
  [
    'operator list',
    async ({ db, print }) => {
      const rows = await listOperators(db);
      print(
        rows
          .map((r) => `${r.operator_id}  ${r.credential_hint}...  ${r.revoked_at ? 'revoked' : 'active '}  ${r.name}`)
          .join('\n') || '(no operators)',
        rows,
      );
    },
  ],
  [
    'operator revoke',
    async ({ db, target, operator, print }) => {
      if (!target) throw new AdminError('operator revoke needs an operator id (as operator list shows it)');
      const r = await revokeOperator(db, target, operator());
      print(`operator ${r.operator_id} (${r.name}) revoked`, { ...r, revoked: true });
    },
  ],
  [
    'jobs dead',
    async ({ options, bus, print }) => {
      const rows = await listDeadLetters(await bus(), auditLimit(options.limit));
      print(rows.map(describeDeadLetter).join('\n') || '(no dead letters)', rows);
    },
  ],
  [
    'jobs redrive',
    async ({ db, target, operator, bus, print }) => {
      const id = deadLetterId(target);
      const r = await redriveDeadLetter(db, await bus(), id, operator());
      print(
        `dead letter ${r.id} published again to ${r.stream} as ${r.msg_id}${r.duplicate ? ' (the stream had it already)' : ''}`,
        r,
      );
    },
  ],
  [
    'jobs discard',
    async ({ db, target, operator, bus, print }) => {
      const r = await discardDeadLetter(db, await bus(), deadLetterId(target, 'discard'), operator());
      print(`dead letter ${r.id} discarded`, r);
    },
  ],
]);

/** --overlap-hours: a non-negative decimal number of hours, 24 when not given. */
function overlapHours(value: string | undefined): number {
  if (value === undefined) return 24;
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) > MAX_OVERLAP_HOURS)
    throw new UsageError(`--overlap-hours must be a number of hours from 0 to ${MAX_OVERLAP_HOURS} (e.g. 24, 0.5, 0)`);
  return Number(value);
}

function auditLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new UsageError('--limit must be a whole number from 1 to 999999');
  return Number(value);
}

/** `token revoke`: a token id, or `-` to read the token (or id) from stdin; the token itself never on the command line. */
function revokeTarget(target: string): string {
  if (target === '-') {
    const read = readSecretFiles({ token: '-' }).token?.trim();
    if (!read) throw new UsageError('token revoke -: stdin held no token');
    return read;
  }
  if (target.startsWith(INTEGRATION_TOKEN_PREFIX))
    throw new UsageError(
      'an integration token is never taken on the command line (shell history, ps): pass its token_id, or - and the token on stdin',
    );
  return target;
}

function describeAuditEntry(e: AuditEntry): string {
  const details = Object.entries(e.details)
    .map(([k, v]) => `${k}=${v === null ? '-' : String(v)}`)
    .join(' ');
  return `${e.at}  ${e.operator}  ${e.action}  ${e.tenant_id ?? '-'}  ${details}`;
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

/**
 * `bus provision`: the bus only, no database (it runs before anything else: npm start, a deploy's Job).
 * A setting JetStream cannot change in place (a stream's retention), or a NATS user that may not
 * manage streams (a service's), is refused in one line.
 */
async function provisionCommand(config: CommonConfig, json: boolean): Promise<number> {
  try {
    const report = await provisionFromConfig(config);
    console.log(json ? JSON.stringify(report) : describeProvisioning(report));
    return 0;
  } catch (err) {
    if (err instanceof BusProvisionError) console.error(`error: ${err.message}`);
    else if ((err as { code?: unknown })?.code === 'PERMISSIONS_VIOLATION')
      console.error(
        `error: NATS user ${config.natsUser ?? '(none)'} may not manage streams (${(err as Error).message}): ` +
          'run bus provision as the provisioning user (NATS_USER=admin and its NATS_PASSWORD)',
      );
    else throw err;
    return 1;
  }
}

/** The exit code: 0 done, 1 refused (an AdminError), 2 a wrong command line. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    refuseSecretsOnCommandLine(argv);
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        email: { type: 'string' },
        tenant: { type: 'string' },
        operator: { type: 'string' },
        'overlap-hours': { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(ACCOUNT_FLAGS.map((flag) => [flag, { type: 'string' as const }])),
        'replace-webhook': { type: 'boolean' },
      },
    });
  } catch (err) {
    // A secret on the command line is refused without the usage text, which would bury the one line that matters.
    console.error(`error: ${(err as Error).message}${err instanceof UsageError ? '' : `\n\n${USAGE}`}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [resource, action, target] = positionals;
  // `npm run admin tenant create --name X` (no `--`): npm keeps --name for itself.
  const swallowed = swallowedByNpm(argv, positionals, process.env);
  if (swallowed) {
    console.error(`error: ${swallowed}`);
    return 2;
  }
  if (values.help || !resource) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  // An operator's tool: development unless NODE_ENV is set (production tenants get no sandbox account).
  const config = loadCommonConfig(developmentUnlessSet());
  if (resource === 'bus' && action === 'provision') return provisionCommand(config, values.json);
  const db = await openAdminDatabase(config.databaseUrl);
  const print = (human: string, data: unknown) => console.log(values.json ? JSON.stringify(data) : human);
  let bus: Promise<Bus> | undefined;
  try {
    // `audit` has no action word: its target-less form is the command.
    const key = resource === 'audit' && action === undefined ? 'audit' : `${resource} ${action}`;
    const run = COMMANDS.get(key);
    if (!run) {
      console.error(`unknown command: ${resource} ${action ?? ''}\n\n${USAGE}`);
      return 2;
    }
    const options = values as Options;
    const mode = config.nodeEnv;
    await run({
      db,
      mode,
      options,
      target,
      print,
      operator: () => ({ ...resolveOperator(options.operator, process.env, mode), source: 'cli' }),
      bus: () => (bus ??= openAdminBus(config)),
    });
    return 0;
  } catch (err) {
    if (err instanceof AdminError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}`);
      return 2;
    }
    throw err;
  } finally {
    if (bus) await (await bus.catch(() => undefined))?.close();
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // What the operator can fix (Postgres out of reach, a refused login, a bad setting, a wrong
    // database) is one line; anything else keeps its stack.
    const e = err as { startupProblem?: unknown; name?: string; message?: string };
    if (err instanceof AdminError || e?.startupProblem === true || e?.name === 'ConfigError')
      console.error(`error: ${e.message}`);
    else console.error(err);
    process.exit(1);
  },
);
