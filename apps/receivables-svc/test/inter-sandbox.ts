import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, serviceDatabaseUrl } from '@payments/db';
import { migrateDatabase } from '@payments/test-support/instances';
import {
  createTestCertificateAuthority,
  writeSandboxInterTls,
  type TestCertificateAuthority,
} from '@payments/inter-cobranca/test-certificates';

/**
 * The bank sandbox with its Inter dialect, in its own process (an app does not import another app):
 * started from apps/bank-sandbox/src/main.ts with a throwaway database and a throwaway CA whose client
 * certificates it accepts.
 */
export interface InterSandbox {
  /** Plain HTTP: the sandbox controls. */
  url: string;
  /** https://127.0.0.1:<port>/inter */
  interBaseUrl: string;
  ca: TestCertificateAuthority;
  control(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    json?: unknown,
  ): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

const root = join(__dirname, '..', '..', '..');

/** `withCaKey`: the sandbox also gets the CA's key, so `POST /sandbox/inter/integrations` can issue integrations. */
export async function startInterSandbox(
  env: Record<string, string> = {},
  { withCaKey = false }: { withCaKey?: boolean } = {},
): Promise<InterSandbox> {
  const database = await createTestDatabase();
  // Migrated as npm run migrate does (the sandbox's migrations are its own code): it logs in as its role.
  await migrateDatabase({ NODE_ENV: 'development', DATABASE_URL: database.url });
  const dir = mkdtempSync(join(tmpdir(), 'inter-sandbox-'));
  const ca = createTestCertificateAuthority('receivables-svc inter test CA');
  const caKey: Record<string, string> = {};
  if (withCaKey) {
    writeFileSync(join(dir, 'inter-ca.key'), ca.keyPem, { mode: 0o600 });
    caKey.BANK_SANDBOX_INTER_TLS_CA_KEY_FILE = join(dir, 'inter-ca.key');
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'apps', 'bank-sandbox', 'src', 'main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: serviceDatabaseUrl(database.url, 'bank_sandbox'),
      BANK_SANDBOX_PORT: '0',
      BANK_SANDBOX_INTER_PORT: '0',
      BANK_SANDBOX_WEBHOOK_RETRY_MS: '100,200',
      BANK_SANDBOX_WEBHOOK_POLL_MS: '50',
      ...writeSandboxInterTls(ca, dir),
      ...caKey,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const cleanup = async () => {
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  };
  let ports: { main: number; inter: number };
  try {
    ports = await readyPorts(child);
  } catch (err) {
    child.kill('SIGKILL');
    await cleanup();
    throw err;
  }
  const url = `http://127.0.0.1:${ports.main}`;
  return {
    url,
    interBaseUrl: `https://127.0.0.1:${ports.inter}/inter`,
    ca,
    async control(method, path, json) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: json === undefined ? {} : { 'content-type': 'application/json' },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await cleanup();
    },
  };
}

/** Waits for the sandbox's two "ready" log lines (pino JSON) and reads the ports they name. */
function readyPorts(child: ChildProcess, timeoutMs = 30_000): Promise<{ main: number; inter: number }> {
  return new Promise((resolve, reject) => {
    let output = '';
    let inter: number | null = null;
    const timer = setTimeout(() => reject(new Error(`bank sandbox not ready:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        let entry: { msg?: string; port?: number };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue;
        }
        if (entry.msg === 'bank-sandbox inter dialect ready') inter = entry.port ?? null;
        if (entry.msg === 'bank-sandbox ready' && entry.port && inter) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          child.stderr!.resume();
          resolve({ main: entry.port, inter });
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bank sandbox exited with ${code}:\n${output}`));
    });
  });
}
