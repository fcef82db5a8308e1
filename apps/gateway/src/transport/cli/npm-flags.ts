/**
 * `npm run admin tenant create --name X --json`, without the `--` after `admin`, never gives the CLI
 * its flags: npm takes every flag before `--` as its own configuration, keeps it in the environment
 * as npm_config_<flag> and passes on only the bare words ("tenant", "create"; sometimes a flag's value
 * too, as a stray word). Seen from the CLI, the command just lacks its flags; this spots the case and
 * says how to type it.
 */

/** The CLI's own flags, and whether each takes a value. */
const FLAGS = {
  name: true,
  tenant: true,
  operator: true,
  'overlap-hours': true,
  limit: true,
  json: false,
  provider: true,
  'beneficiary-name': true,
  'beneficiary-tax-id': true,
  'beneficiary-city': true,
  'pix-key': true,
  agency: true,
  account: true,
  'client-id': true,
  'client-secret-file': true,
  'cert-file': true,
  'key-file': true,
  'base-url': true,
  'pix-api-url': true,
  'token-url': true,
  'replace-webhook': false,
} as const;

/** npm keeps `--beneficiary-name` as npm_config_beneficiary_name. */
const npmVariable = (flag: string) => `npm_config_${flag.replace(/-/g, '_')}`;

/** How many bare words after `<resource> <action>` each command takes. */
const TARGETS: Record<string, number> = { 'tenant disable': 1, 'token revoke': 1, 'jobs redrive': 1 };

/**
 * When npm swallowed some of the CLI's flags: a one-line explanation with the command to type
 * instead; otherwise undefined.
 */
export function swallowedByNpm(
  argv: string[],
  positionals: string[],
  env: Record<string, string | undefined>,
): string | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined; // not run through npm
  const swallowed = (Object.keys(FLAGS) as Array<keyof typeof FLAGS>).filter((flag) => {
    const value = env[npmVariable(flag)];
    return (
      value !== undefined && value !== '' && !argv.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`))
    );
  });
  if (swallowed.length === 0) return undefined;

  const [resource = '<resource>', action = '<action>', ...rest] = positionals;
  const targets = rest.slice(0, TARGETS[`${resource} ${action}`] ?? 0);
  const strays = rest.slice(targets.length);
  // npm keeps the value (npm_config_name=Acme), or only `true` and leaves the value as a stray word.
  // Which stray belongs to which flag is known only when one flag lost its value: with several, the
  // command shows placeholders rather than a guess that could swap, say, a name and a city.
  const lostValues = swallowed.filter((flag) => FLAGS[flag] && env[npmVariable(flag)] === 'true');
  const flags: string[] = [];
  for (const flag of swallowed) {
    if (!FLAGS[flag]) {
      flags.push(`--${flag}`);
      continue;
    }
    const kept = env[npmVariable(flag)]!;
    const placeholder = `<${flag === 'tenant' ? 'tenant_id' : flag}>`;
    const stray = lostValues.length === 1 ? strays.shift() : undefined;
    const value = kept !== 'true' ? quote(kept) : stray !== undefined ? quote(stray) : placeholder;
    flags.push(`--${flag} ${value}`);
  }
  const command = ['npm run admin --', resource, action, ...targets, ...flags].join(' ');
  const names = swallowed.map((f) => `--${f}`);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `npm kept ${list} for itself (flags before -- go to npm, not to the script): run it as ${command}`;
}

function quote(value: string): string {
  return /^[\w@%+=:,./<>-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
