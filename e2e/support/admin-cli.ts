import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

export interface AdminRun {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs `npm run admin -- <args>` exactly as an operator types it, against `databaseUrl`, with
 * `stdin` piped in when given (secrets read from "-") and extra environment.
 */
export function runAdmin(
  databaseUrl: string,
  args: string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'admin', '--', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, stderr, code: code ?? 1 }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** `tenant account ... --json`, parsed; throws with the CLI's own words when it refuses. */
export async function setProviderAccount(databaseUrl: string, args: string[], stdin?: string): Promise<unknown> {
  const run = await runAdmin(databaseUrl, ['tenant', 'account', ...args, '--json'], { stdin });
  if (run.code !== 0) throw new Error(`tenant account exited ${run.code}: ${run.stderr}${run.stdout}`);
  return JSON.parse(run.stdout) as unknown;
}
