import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Callback receivers on several loopback addresses (one host each) that answer 200 only after
 * `answerAfterMs`: a tenant's slow receivers. They count the requests they hold open, the most at
 * once, and when the first came in (no answer goes out before that plus answerAfterMs).
 */
export class SlowReceivers {
  private readonly servers: Server[] = [];
  private readonly open = new Set<ServerResponse>();
  /** One URL per host, in the order of `hosts`. */
  readonly urls: string[] = [];
  maxOpen = 0;
  firstAt = Infinity;

  constructor(
    private readonly hosts: readonly string[],
    private readonly answerAfterMs: number,
    private readonly path = '/callbacks',
  ) {}

  /** Requests held open now. */
  get openNow(): number {
    return this.open.size;
  }

  async start(): Promise<this> {
    for (const host of this.hosts) {
      const server = createServer((req, res) => {
        req.resume();
        this.firstAt = Math.min(this.firstAt, Date.now());
        this.open.add(res);
        this.maxOpen = Math.max(this.maxOpen, this.open.size);
        const timer = setTimeout(() => res.writeHead(200).end('{}'), this.answerAfterMs);
        res.on('close', () => {
          clearTimeout(timer);
          this.open.delete(res);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, host, resolve));
      this.servers.push(server);
      this.urls.push(`http://${host}:${(server.address() as AddressInfo).port}${this.path}`);
    }
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    for (const server of this.servers) server.closeAllConnections();
    await Promise.all(this.servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
