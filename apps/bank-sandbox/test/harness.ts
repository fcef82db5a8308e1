import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMigratedTestDatabase } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import {
  createCertificateAuthority,
  writeSandboxInterTls,
  type CertificateAuthority,
} from '@payments/dev-certificates';
import { createLogger } from '@payments/logger';
import { loadBankSandboxConfig, startBankSandbox, type BankSandboxConfig, type RunningBankSandbox } from '../src';

/** A local HTTP server the bank POSTs to: each request's body goes to handle(), which answers its status. */
abstract class RecordingServer {
  private server: Server | null = null;
  url = '';

  constructor(private readonly path: string) {}

  protected abstract handle(req: IncomingMessage, body: string): number;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.writeHead(this.handle(req, Buffer.concat(chunks).toString('utf8'))).end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.path}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** A local HTTP server standing in for our receivables service's webhook endpoint. */
export class WebhookReceiver extends RecordingServer {
  readonly received: Array<{ headers: IncomingHttpHeaders; body: string; answeredWith: number }> = [];
  /** Status codes to answer one charge's webhooks with (by our_number), in order; then `fallback`. */
  readonly scripts = new Map<string, number[]>();
  fallback = 200;

  constructor() {
    super('/provider/webhooks/bank-sandbox');
  }

  protected handle(req: IncomingMessage, body: string): number {
    const status = this.scripts.get(ourNumberOf(body))?.shift() ?? this.fallback;
    this.received.push({ headers: req.headers, body, answeredWith: status });
    return status;
  }

  /** The deliveries about one charge. */
  deliveriesFor(ourNumber: string) {
    return this.received.filter((r) => ourNumberOf(r.body) === ourNumber);
  }
}

/** Where a dialect's notices land: records each POST (a JSON body) and answers the statuses scripted, then 200. */
export class ScriptedReceiver<Body> extends RecordingServer {
  readonly received: Array<{
    at: number;
    path: string;
    headers: IncomingHttpHeaders;
    body: Body;
    answeredWith: number;
  }> = [];
  readonly script: number[] = [];

  protected handle(req: IncomingMessage, body: string): number {
    const status = this.script.shift() ?? 200;
    this.received.push({
      at: Date.now(),
      path: req.url ?? '',
      headers: req.headers,
      body: JSON.parse(body) as Body,
      answeredWith: status,
    });
    return status;
  }
}

function ourNumberOf(body: string): string {
  try {
    return String((JSON.parse(body) as { our_number?: unknown }).our_number);
  } catch {
    return '';
  }
}

export interface Harness {
  sandbox: RunningBankSandbox;
  config: BankSandboxConfig;
  receiver: WebhookReceiver;
  databaseUrl: string;
  /** The same database as the server's superuser (npm run migrate's connection). */
  adminUrl: string;
  restart(overrides?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

/** A sandbox on port 0 with its own database, short retry delays, and a webhook receiver. */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  // Migrated beforehand as npm run migrate does; the sandbox logs in as its role.
  const database = await createMigratedTestDatabase(SCHEMA, migrations);
  const receiver = new WebhookReceiver();
  await receiver.start();
  const configFor = (overrides: Record<string, string>) =>
    loadBankSandboxConfig({
      DATABASE_URL: database.url,
      BANK_SANDBOX_PORT: '0',
      BANK_SANDBOX_SLOW_MS: '1500',
      BANK_SANDBOX_WEBHOOK_URL: receiver.url,
      BANK_SANDBOX_WEBHOOK_RETRY_MS: '100,200',
      BANK_SANDBOX_WEBHOOK_POLL_MS: '50',
      BANK_SANDBOX_WEBHOOK_TIMEOUT_MS: '2000',
      ...env,
      ...overrides,
    });
  const logger = createLogger('bank-sandbox', process.env.TEST_LOG_LEVEL ?? 'silent');
  const harness: Harness = {
    config: configFor({}),
    sandbox: await startBankSandbox(configFor({}), logger),
    receiver,
    databaseUrl: database.url,
    adminUrl: database.adminUrl,
    async restart(overrides = {}) {
      await harness.sandbox.stop();
      harness.config = configFor(overrides);
      harness.sandbox = await startBankSandbox(harness.config, logger);
    },
    async close() {
      await harness.sandbox.stop();
      await receiver.stop();
      await database.drop();
    },
  };
  return harness;
}

/** Waits until check() stops throwing, or rethrows its last error after timeoutMs. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** The sandbox's controls on its main port, as documented in its README. */
export async function control(
  sandboxUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  json?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${sandboxUrl}${path}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Sets a call's body, JSON or a form, with its content-type. */
export function encodeBody(
  headers: Record<string, string>,
  options: { json?: unknown; form?: Record<string, string> },
): string | undefined {
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  return body;
}

export interface NoticeSuite {
  ca: CertificateAuthority;
  /** The sandbox, from beforeAll on. */
  readonly harness: Harness;
  /** Closed after all the suite's tests. */
  clients: Array<{ close(): Promise<void> }>;
  sandbox(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    json?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

/**
 * A suite of a dialect's notices (call at its top level): a sandbox with the Inter dialect and the PIX
 * API on a mutual TLS port of a CA of the suite's own, its notices retried after `retryMs` and its
 * clock beating every 20 ms, and `receiver` started first. After each test the faults at `faultsPath`
 * are cleared and the receiver's script emptied; after all, everything is closed.
 */
export function noticeSuite(options: {
  caName: string;
  retryMs: number[];
  receiver: ScriptedReceiver<unknown>;
  faultsPath: string;
}): NoticeSuite {
  const ca = createCertificateAuthority(options.caName);
  const dir = mkdtempSync(join(tmpdir(), 'bank-sandbox-notices-'));
  let harness: Harness | undefined;
  const suite: NoticeSuite = {
    ca,
    get harness() {
      if (!harness) throw new Error('the sandbox starts in beforeAll');
      return harness;
    },
    clients: [],
    sandbox: (method, path, json) => control(suite.harness.sandbox.url, method, path, json),
  };
  beforeAll(async () => {
    await options.receiver.start();
    harness = await startHarness({
      BANK_SANDBOX_INTER_PORT: '0',
      BANK_SANDBOX_INTER_NOTICE_RETRY_MS: options.retryMs.join(','),
      BANK_SANDBOX_INTER_POLL_MS: '20',
      ...writeSandboxInterTls(ca, dir, { withCaKey: true }),
    });
  });
  afterAll(async () => {
    await Promise.all(suite.clients.map((c) => c.close()));
    await harness?.close();
    await options.receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect((await suite.sandbox('DELETE', options.faultsPath)).status).toBe(200);
    options.receiver.script.length = 0;
  });
  return suite;
}
