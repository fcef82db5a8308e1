import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { loadCommonConfig } from '@payments/config';
import type { GatewayDatabase } from '../db/schema';
import { openAdminDatabase } from './admin-database';
import { swallowedByNpm } from './npm-flags';
import {
  AdminError,
  createTenant,
  disableTenant,
  issueToken,
  listTenants,
  listTokens,
  revokeToken,
} from '../tenancy/tenant-admin';

const USAGE = `Operator commands (npm run admin -- <command>):
  tenant create --name <name> [--json]   new tenant; prints its id, integration token and signing secret ONCE
  tenant list [--json]                   tenants with their number of active tokens
  tenant disable <tenant_id>             refuse every token of a tenant from now on
  token create --tenant <tenant_id> [--json]   issue another integration token
  token list --tenant <tenant_id> [--json]
  token revoke <token_id | integration token>  JWTs issued from it stop working at once
Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/receivables)`;

interface Options {
  name?: string;
  tenant?: string;
  json: boolean;
  help?: boolean;
}

interface Command {
  db: Kysely<GatewayDatabase>;
  options: Options;
  /** The positional argument after the action, if any. */
  target: string | undefined;
  /** Prints the human text, or the data as one JSON line with --json. */
  print: (human: string, data: unknown) => void;
}

/** Each command by `<resource> <action>`; it prints what it did or throws an AdminError for the operator. */
const COMMANDS = new Map<string, (command: Command) => Promise<void>>([
  [
    'tenant create',
    async ({ db, options, print }) => {
      if (!options.name)
        throw new AdminError('tenant create needs --name: npm run admin -- tenant create --name <name> [--json]');
      const t = await createTenant(db, options.name);
      print(
        `tenant_id:          ${t.tenant_id}\nintegration_token:  ${t.integration_token}\nsigning_secret:     ${t.signing_secret}\n(token id ${t.token_id}) Store the token and the secret now: they are not shown again.`,
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
    async ({ db, target, print }) => {
      if (!target) throw new AdminError('tenant disable needs a tenant id');
      await disableTenant(db, target);
      print(`tenant ${target} disabled`, { tenant_id: target, status: 'disabled' });
    },
  ],
  [
    'token create',
    async ({ db, options, print }) => {
      if (!options.tenant)
        throw new AdminError(
          'token create needs --tenant: npm run admin -- token create --tenant <tenant_id> [--json]',
        );
      const t = await issueToken(db, options.tenant);
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
    async ({ db, target, print }) => {
      if (!target) throw new AdminError('token revoke needs a token id or the token');
      const r = await revokeToken(db, target);
      print(`token ${r.token_id} of tenant ${r.tenant_id} revoked`, { ...r, revoked: true });
    },
  ],
]);

/** The exit code: 0 done, 1 refused (an AdminError), 2 a wrong command line. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        tenant: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
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
  const db = await openAdminDatabase(loadCommonConfig().databaseUrl);
  const print = (human: string, data: unknown) => console.log(values.json ? JSON.stringify(data) : human);
  try {
    const run = COMMANDS.get(`${resource} ${action}`);
    if (!run) {
      console.error(`unknown command: ${resource} ${action ?? ''}\n\n${USAGE}`);
      return 2;
    }
    await run({ db, options: values, target, print });
    return 0;
  } catch (err) {
    if (err instanceof AdminError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
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
