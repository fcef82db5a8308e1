import { readFileSync } from 'node:fs';
import { AdminError } from '../../domain/tenancy/admin-error';

/**
 * Secrets reach the admin CLI only through files (or stdin): a value on the command line stays in
 * the shell's history and shows in `ps` to every user of the machine.
 */

/** A wrong command line: the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Flags an operator may reach for to pass a secret inline, and the file flag to use instead. */
const INLINE_SECRET_FLAGS: Record<string, string> = {
  'client-secret': 'client-secret-file',
  secret: 'client-secret-file',
  cert: 'cert-file',
  certificate: 'cert-file',
  'cert-pem': 'cert-file',
  key: 'key-file',
  'private-key': 'key-file',
  'key-pem': 'key-file',
};

/** Refuses a secret given inline (`--client-secret x`, `--key=...`), naming the file flag; never echoes the value. */
export function refuseSecretsOnCommandLine(argv: readonly string[]): void {
  for (const arg of argv) {
    if (arg === '--') break;
    const flag = /^--([a-z-]+)(?:=|$)/.exec(arg)?.[1];
    const instead = flag === undefined ? undefined : INLINE_SECRET_FLAGS[flag];
    if (instead)
      throw new UsageError(
        `--${flag} is refused: secrets are never taken on the command line (shell history, ps). ` +
          `Put it in a file and pass --${instead} <file>, or --${instead} - to read it from stdin`,
      );
  }
}

/**
 * Reads each given file flag's file (`-`: stdin, for one of them at most). An unreadable file is an
 * AdminError naming the flag and the path, never any of the content.
 */
export function readSecretFiles<F extends string>(
  files: Record<F, string | undefined>,
  readStdin: () => string = () => readFileSync(0, 'utf8'),
): Record<F, string | undefined> {
  const entries = Object.entries(files) as Array<[F, string | undefined]>;
  const fromStdin = entries.filter(([, path]) => path === '-').map(([flag]) => `--${flag}`);
  if (fromStdin.length > 1)
    throw new UsageError(`only one file flag may read stdin (-); ${fromStdin.join(' and ')} both ask for it`);
  return Object.fromEntries(
    entries.map(([flag, path]) => [flag, path === undefined ? undefined : readSecret(flag, path, readStdin)]),
  ) as Record<F, string | undefined>;
}

function readSecret(flag: string, path: string, readStdin: () => string): string {
  if (path === '') throw new UsageError(`--${flag} needs a file (or - for stdin)`);
  try {
    return path === '-' ? readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AdminError(`--${flag}: cannot read ${path === '-' ? 'stdin' : path} (${code})`);
  }
}
