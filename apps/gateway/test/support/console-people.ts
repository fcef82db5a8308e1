import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { RunMode } from '@payments/config';
import { keyring } from '@payments/credential-seal';
import { createLogger } from '@payments/logger';
import { adminApp } from '../../src/transport/http/admin-app';
import { loadSigningKeys } from '../../src/domain/auth/signing-keys';
import type { GatewayConfig } from '../../src/config';
import type { GatewayDatabase } from '../../src/db/schema';
import type { Answer } from './http';

/*
 * What the console-session tests share: an admin app on the test's database with a clock the test
 * moves, HTTP calls with the console's headers, and TOTP codes computed here, independently of the
 * library the gateway uses.
 */

/** RFC 6238 (SHA-1, 6 digits, 30 s) on RFC 4648 base32, from node:crypto alone. */
export function totpCode(secretBase32: string, atMs: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secretBase32.replace(/=+$/, '')) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, '0');
}

export interface CallOptions {
  /** `Bearer <credential>` or `Session <id>`, as given. */
  authorization?: string;
  body?: unknown;
  /** The end user's address, as the console forwards it. */
  address?: string;
  requestId?: string;
}

export async function request(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer & { headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.authorization) headers.authorization = options.authorization;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.address) headers['x-forwarded-for'] = options.address;
  if (options.requestId) headers['x-request-id'] = options.requestId;
  const res = await fetch(base + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', json, text, headers: res.headers };
}

export interface ClockedAdmin {
  url: string;
  /** Moves the admin app's clock forward. */
  advance(ms: number): void;
  now(): number;
  close(): Promise<void>;
}

/** An admin app (development or production mode) on the database, at a time the test moves. */
export async function clockedAdmin(
  db: Kysely<GatewayDatabase>,
  bus: Bus,
  config: GatewayConfig,
  mode: RunMode,
  startMs = Date.now(),
): Promise<ClockedAdmin> {
  let now = startMs;
  const keys = await loadSigningKeys(db, 'development');
  const { app } = adminApp({
    db,
    bus,
    keyring: keyring(config.credentialsEncryptionKey, config.credentialsPreviousKeys),
    mode,
    limits: config,
    logger: createLogger('test', 'silent'),
    keys,
    jwt: config.jwt,
    clock: () => new Date(now),
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    advance: (ms) => {
      now += ms;
    },
    now: () => now,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
