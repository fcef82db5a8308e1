import { parseArgs } from 'node:util';
import type { Bus } from '@payments/bus';
import { developmentUnlessSet, loadCommonConfig } from '@payments/config';
import { openAdminDatabase } from '../../db/admin-database';
import { resolveOperator } from '../../domain/tenancy/admin-audit';
import { AdminError } from '../../domain/tenancy/tenant-admin';
import { openAdminBus } from '../bus/jobs';
import { AUDIT_COMMANDS } from './audit-commands';
import { provisionCommand } from './bus-commands';
import { ACCOUNT_FLAGS, type Options } from './command';
import { JOBS_COMMANDS } from './jobs-commands';
import { swallowedByNpm } from './npm-flags';
import { OPERATOR_COMMANDS } from './operator-commands';
import { refuseSecretsOnCommandLine, UsageError } from './secret-files';
import { TENANT_COMMANDS } from './tenant-commands';
import { TOKEN_COMMANDS } from './token-commands';
import { USAGE } from './usage';

/** The operator CLI (npm run admin): each command group is a file beside this one. */
const COMMANDS = new Map([
  ...TENANT_COMMANDS,
  ...TOKEN_COMMANDS,
  ...AUDIT_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...JOBS_COMMANDS,
]);

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
