import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import type { Page } from 'puppeteer-core';
import { builtAppEnv, builtFile } from './built-app';
import { open, submit } from './browser';

/*
 * The console as the production image runs it (plain `node dist/apps/console/main.js`,
 * NODE_ENV=production), and the people who sign in to it: invited through the admin API, accepted
 * with a code from an authenticator (an RFC 6238 few-liner here, independent of the gateway's
 * library), signed in with e-mail, password and code.
 */

/** The session cookie of a production console (Secure, so `__Host-`). */
export const PRODUCTION_SESSION_COOKIE = '__Host-console_session';

/** RFC 4648 base32 (no padding needed) to bytes. */
function base32(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of text.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((b) => parseInt(b, 2)));
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) at `step` steps from now (RFC 4226 truncation). */
export function totp(secret: string, step = 0): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000) + step));
  const mac = createHmac('sha1', base32(secret)).update(counter).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** The built console in production mode, on its own port. */
export class BuiltConsole {
  private child?: ChildProcess;
  output = '';
  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it against a gateway (GATEWAY_URL, GATEWAY_ADMIN_URL) and resolves once /healthz answers. */
  async start(env: Record<string, string>): Promise<void> {
    const child = spawn(process.execPath, [builtFile('console')], {
      cwd: tmpdir(),
      env: builtAppEnv({
        CONSOLE_SESSION_KEY: randomBytes(32).toString('base64'),
        ...env,
        NODE_ENV: 'production',
        CONSOLE_PORT: String(this.port),
        LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-10_000)));
    child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-10_000)));
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the console exited ${child.exitCode}:\n${this.output}`);
      const ready = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return;
      if (Date.now() - started > 30_000) throw new Error(`the console did not start:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

/** Someone who accepted an invitation: what they sign in with. */
export interface Person {
  email: string;
  password: string;
  totpSecret: string;
}

export type Invitee = { role: 'tenant_viewer' | 'tenant_admin'; tenantId: string } | { role: 'operator' };

/**
 * Invites someone through the admin API with an operator credential and accepts the invitation as
 * they would (the admin API's invitation read and accept), with the current step's code: their first
 * sign-in takes a later step's, as a code is taken once.
 */
export async function invitedPerson(adminUrl: string, operatorCredential: string, invitee: Invitee): Promise<Person> {
  const email = `${invitee.role}.${randomBytes(4).toString('hex')}@example.com`;
  const password = `a long passphrase ${randomBytes(4).toString('hex')}`;
  const path =
    invitee.role === 'operator'
      ? '/admin/v1/operator-invitations'
      : `/admin/v1/tenants/${invitee.tenantId}/invitations`;
  const body = invitee.role === 'operator' ? { email } : { email, role: invitee.role };
  const invited = await adminCall(adminUrl, 'POST', path, body, operatorCredential);
  const token = (invited as { invitation_token: string }).invitation_token;
  const read = (await adminCall(adminUrl, 'GET', `/admin/v1/invitations/${token}`)) as { totp_secret: string };
  await adminCall(adminUrl, 'POST', `/admin/v1/invitations/${token}/accept`, {
    name: 'Pessoa de Teste',
    password,
    totp: totp(read.totp_secret),
  });
  return { email, password, totpSecret: read.totp_secret };
}

async function adminCall(
  adminUrl: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  credential?: string,
): Promise<unknown> {
  const res = await fetch(adminUrl + path, {
    method,
    headers: {
      ...(credential ? { authorization: `Bearer ${credential}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * Signs `person` in on the console's form, landing on `next`. `step` is the TOTP step from now to
 * use: a code is taken once per person, so each sign-in of the same person takes the next one.
 */
export async function signIn(page: Page, consoleUrl: string, person: Person, next: string, step = 1): Promise<void> {
  await open(page, `${consoleUrl}/login?next=${encodeURIComponent(next)}`);
  await page.type('#password-login input[name=email]', person.email);
  await page.type('#password-login input[name=password]', person.password);
  await page.type('#password-login input[name=totp]', totp(person.totpSecret, step));
  const landed = await submit(page, '#password-login button[type=submit]');
  if (landed.status() !== 200 || new URL(page.url()).pathname !== new URL(next, consoleUrl).pathname)
    throw new Error(`signing ${person.email} in landed on ${page.url()} (${landed.status()})`);
}
