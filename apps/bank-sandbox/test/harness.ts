import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadBankSandboxConfig, startBankSandbox, type BankSandboxConfig, type RunningBankSandbox } from '../src';

/** A local HTTP server standing in for our receivables service's webhook endpoint. */
export class WebhookReceiver {
  readonly received: Array<{ headers: IncomingHttpHeaders; body: string; answeredWith: number }> = [];
  /** Status codes to answer one charge's webhooks with (by our_number), in order; then `fallback`. */
  readonly scripts = new Map<string, number[]>();
  fallback = 200;
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = this.scripts.get(ourNumberOf(body))?.shift() ?? this.fallback;
        this.received.push({ headers: req.headers, body, answeredWith: status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/provider/webhooks/bank-sandbox`;
  }

  /** The deliveries about one charge. */
  deliveriesFor(ourNumber: string) {
    return this.received.filter((r) => ourNumberOf(r.body) === ourNumber);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
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
  restart(overrides?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

/** A sandbox on port 0 with its own database, short retry delays, and a webhook receiver. */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const database = await createTestDatabase();
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
