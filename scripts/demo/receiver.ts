import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallbackBody, ReceivedCallback } from './callbacks';
import { verifyWebhook, type WebhookHeaders } from '@payments/sdk';

/**
 * The ERP's callback endpoint: a local HTTP server that checks every callback's Standard Webhooks
 * signature with the tenant's secret, answers 204 (401 when the signature is wrong), keeps each event
 * once, and lets the demo wait for the callbacks it expects.
 */
export class CallbackReceiver {
  readonly callbacks: ReceivedCallback[] = [];
  /** Why a callback was refused (bad signature, bad JSON): any entry fails the waits. */
  readonly problems: string[] = [];
  /** Deliveries of an event already received (at-least-once delivery): counted, not kept. */
  duplicates = 0;
  url = '';
  private readonly server: Server;
  private readonly changes = new EventEmitter();

  constructor(private readonly signingSecret: string) {
    this.server = createServer((req, res) => this.receive(req, res));
  }

  async start(listenHost: string, callbackHost: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, listenHost, resolve);
    });
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://${callbackHost}:${port}/demo/callbacks`;
  }

  /** Resolves with the first non-undefined `pick` of the callbacks so far; rejects on timeout or a refused callback. */
  waitFor<T>(label: string, timeoutMs: number, pick: (callbacks: ReceivedCallback[]) => T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const finish = (error?: Error, value?: T) => {
        clearTimeout(timer);
        this.changes.off('change', check);
        if (error) reject(error);
        else resolve(value as T);
      };
      const check = () => {
        if (this.problems.length > 0) return finish(new Error(`callback refused: ${this.problems[0]}`));
        try {
          const value = pick(this.callbacks);
          if (value !== undefined) finish(undefined, value);
        } catch (err) {
          finish(err instanceof Error ? err : new Error(String(err)));
        }
      };
      const timer = setTimeout(
        () =>
          finish(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${label} (${this.callbacks.length} callbacks received so far)`,
            ),
          ),
        timeoutMs,
      );
      this.changes.on('change', check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = this.accept(req.headers as WebhookHeaders, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(status).end();
      this.changes.emit('change');
    });
  }

  /** Records one delivery; the HTTP status to answer. */
  private accept(headers: WebhookHeaders, rawBody: string): number {
    const eventId = headers['webhook-id'] ?? '(no webhook-id)';
    try {
      verifyWebhook(this.signingSecret, headers, rawBody);
    } catch {
      this.problems.push(`event ${eventId} has no valid webhook-signature`);
      return 401;
    }
    if (this.callbacks.some((c) => c.eventId === eventId)) {
      this.duplicates += 1;
      return 204;
    }
    try {
      this.callbacks.push({ eventId, body: JSON.parse(rawBody) as CallbackBody, receivedAt: Date.now() });
      return 204;
    } catch {
      this.problems.push(`event ${eventId} is not JSON`);
      return 400;
    }
  }
}
