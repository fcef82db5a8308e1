import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST as an ERP's callback endpoint received it. */
export interface ReceivedCallback {
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** What the receiver answered (null: it never answered). */
  answered: number | null;
}

/** Decides the answer to the n-th request (0-based): a status, optional headers and body, or 'hang'. */
export type Behaviour = (
  n: number,
  req: IncomingMessage,
) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A real HTTP server on a local port standing in for an ERP's callback URL. */
export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private server!: Server;
  private hanging: ServerResponse[] = [];
  url = '';
  /** Requests open right now (a hanging one until the sender gives up), and the most ever open at once. */
  inFlight = 0;
  maxInFlight = 0;

  constructor(public behaviour: Behaviour = () => ({ status: 200 })) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.once('close', () => (this.inFlight -= 1));
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const n = this.received.length;
        const record: ReceivedCallback = {
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
          answered: null,
        };
        this.received.push(record);
        const decision = this.behaviour(n, req);
        if (decision === 'hang') {
          this.hanging.push(res);
          return;
        }
        record.answered = decision.status;
        res.writeHead(decision.status, { 'content-type': 'application/json', ...decision.headers });
        res.end(decision.body ?? '{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callbacks`;
    return this;
  }

  delivered(): ReceivedCallback[] {
    return this.received.filter((r) => r.answered !== null && r.answered >= 200 && r.answered < 300);
  }

  forEvent(eventId: string): ReceivedCallback[] {
    return this.received.filter((r) => r.headers['webhook-id'] === eventId);
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  label = 'condition',
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
