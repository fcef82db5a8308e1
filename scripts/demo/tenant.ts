import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** What `npm run admin -- tenant create --json` prints (docs/architecture.md, Tenancy). */
export interface TenantCredentials {
  tenant_id: string;
  integration_token: string;
  signing_secret: string;
  name?: string;
}

const ROOT = join(__dirname, '..', '..');

/** Creates a tenant exactly as an operator does: the admin CLI, in a child process, with --json. */
export function createTenantWithCli(name: string, timeoutMs: number): Promise<TenantCredentials> {
  const args = ['run', '-s', 'admin', '--', 'tenant', 'create', '--name', name, '--json'];
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd: ROOT, env: process.env, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) {
        const why = err.killed
          ? `no answer in ${timeoutMs} ms`
          : stderr.trim().split('\n').slice(-3).join(' / ') || err.message;
        reject(
          new Error(
            `npm run admin -- tenant create failed (${why}); the CLI uses DATABASE_URL=${process.env.DATABASE_URL ?? '(default)'}: it must be the running system's database`,
          ),
        );
        return;
      }
      try {
        resolve(parseTenant(stdout));
      } catch (parseErr) {
        reject(parseErr);
      }
    });
  });
}

/** The CLI's JSON object (the last JSON line of its output, should anything else be printed before it). */
export function parseTenant(output: string): TenantCredentials {
  const line = output
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.trim().startsWith('{'));
  const parsed = line ? (JSON.parse(line) as Partial<TenantCredentials>) : {};
  if (!parsed.tenant_id || !parsed.integration_token || !parsed.signing_secret) {
    throw new Error(
      `expected the admin CLI's JSON (tenant_id, integration_token, signing_secret), got: ${output.slice(0, 200)}`,
    );
  }
  return {
    tenant_id: parsed.tenant_id,
    integration_token: parsed.integration_token,
    signing_secret: parsed.signing_secret,
    name: parsed.name,
  };
}
