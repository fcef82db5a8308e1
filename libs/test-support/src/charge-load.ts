import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Charges posted through several gateways and the callbacks they bring, for the chaos test and the
 * scale-out benches: plain HTTP, as an ERP sees the system.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An ERP's callback endpoint that answers 200 at once and keeps, per charge, the distinct events
 * (webhook-id) of each type, and the arrival of every request (re-sent deliveries included).
 */
export class CallbackTally {
  private server!: Server;
  url = '';
  /** Requests received, re-sent deliveries included. */
  requests = 0;
  /** Distinct webhook-ids. */
  readonly events = new Set<string>();
  /** Per accounts_receivable_id, the distinct webhook-ids of its `registered` callbacks. */
  readonly registered = new Map<string, Set<string>>();
  /** Arrival time (ms) of every request, in order. */
  readonly arrivals: number[] = [];
  /** Callbacks whose type is not `registered` or whose success is not true. */
  readonly unexpected: string[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.record(req.headers['webhook-id'], Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callbacks`;
    return this;
  }

  private record(webhookId: string | string[] | undefined, body: string): void {
    this.requests += 1;
    this.arrivals.push(Date.now());
    const id = typeof webhookId === 'string' ? webhookId : '';
    this.events.add(id);
    let parsed: { type?: string; success?: boolean; accounts_receivable_id?: string } = {};
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      // kept as unexpected below
    }
    if (parsed.type !== 'registered' || parsed.success !== true || !parsed.accounts_receivable_id) {
      this.unexpected.push(body.slice(0, 200));
      return;
    }
    const ids = this.registered.get(parsed.accounts_receivable_id) ?? new Set<string>();
    ids.add(id);
    this.registered.set(parsed.accounts_receivable_id, ids);
  }

  /** Re-sent deliveries: requests beyond one per distinct webhook-id. */
  get resent(): number {
    return this.requests - this.events.size;
  }

  get lastArrival(): number {
    return this.arrivals[this.arrivals.length - 1] ?? 0;
  }

  /** The largest gap between consecutive arrivals after `from` (from `from` itself to the first). */
  longestStallAfter(from: number): number {
    let previous = from;
    let longest = 0;
    for (const at of this.arrivals) {
      if (at < from) continue;
      longest = Math.max(longest, at - previous);
      previous = at;
    }
    return longest;
  }

  async waitForRegistered(n: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.registered.size < n) {
      if (Date.now() > deadline)
        throw new Error(`only ${this.registered.size} of ${n} charges had a registered callback in ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** An access token for a tenant's integration token, from a gateway. */
export async function authenticate(gatewayUrl: string, integrationToken: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${integrationToken}` },
  });
  if (res.status !== 200) throw new Error(`authenticate answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Registers one payer (client) for the tenant and returns its client_id. */
export async function createClient(gatewayUrl: string, accessToken: string): Promise<string> {
  const clientId = randomUUID();
  const res = await fetch(`${gatewayUrl}/api/v1/clients`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify([{ client_id: clientId, name: 'Maria da Silva', cnpj_cpf: '529.982.247-25' }]),
  });
  if (res.status !== 201) throw new Error(`POST /clients answered ${res.status}: ${await res.text()}`);
  return clientId;
}

/** One charge of a load: alternately a bank slip and a PIX charge, each with new ids. */
export function chargeItem(clientId: string, callbackUrl: string, i: number) {
  return {
    url_callback: callbackUrl,
    client_id: clientId,
    payment_slip_id: randomUUID(),
    account_receivable_id: randomUUID(),
    payment_method: i % 2 === 0 ? 1 : 3,
    items: [{ description: 'Mensalidade', quantity: 1, price: 99.9 }],
    due_date: '2026-12-20',
    emission_date: '2026-11-23',
    value: 99.9,
    discount_type: 'NaoTemDesconto',
    fine_value: 2,
    interest_amount: 0.03,
  };
}

export interface ChargeLoad {
  gateways: readonly string[];
  accessToken: string;
  clientId: string;
  callbackUrl: string;
  total: number;
  batchSize: number;
  /** POSTs in flight at once. */
  concurrency: number;
  /** Stops the load: no POST starts after it fires (postCharges then rejects). */
  signal?: AbortSignal;
}

export interface Posting {
  /** When the first POST was sent (ms). */
  startedAt: number;
  /** Every accepted POST: when its 202 arrived and how many charges it carried, by gateway. */
  accepted: Array<{ at: number; size: number; gateway: string }>;
  /** 429 answers (each retried after its Retry-After). */
  limited: number;
  /** 503 answers, network errors and 409 "in progress" (each retried after half a second). */
  unavailable: number;
  /** account_receivable_id of every charge posted. */
  ids: string[];
}

/**
 * Posts `total` charges in batches, batch k to gateway k mod n (alternating), `concurrency` at once.
 * A 429 waits its Retry-After; a 503, a network error, or a 409 saying that an earlier attempt with
 * the key is still in progress (its answer was lost, e.g. to a timeout) wait half a second; then the
 * same batch (same Idempotency-Key) goes to the next gateway. Any other answer fails the load.
 */
export async function postCharges(load: ChargeLoad): Promise<Posting> {
  const batches = Array.from({ length: Math.ceil(load.total / load.batchSize) }, (_, b) =>
    Array.from({ length: Math.min(load.batchSize, load.total - b * load.batchSize) }, (_, i) =>
      chargeItem(load.clientId, load.callbackUrl, i),
    ),
  );
  const posting: Posting = {
    startedAt: Date.now(),
    accepted: [],
    limited: 0,
    unavailable: 0,
    ids: batches.flat().map((item) => item.account_receivable_id),
  };
  let next = 0;
  // One worker's failure stops the others, so that nothing goes on posting behind the caller's back.
  const stop = new AbortController();
  const signal = load.signal ? AbortSignal.any([load.signal, stop.signal]) : stop.signal;
  const worker = async () => {
    while (next < batches.length) {
      signal.throwIfAborted();
      const k = next++;
      await postBatch(load, posting, batches[k], k, signal);
    }
  };
  const workers = Array.from({ length: load.concurrency }, () =>
    worker().catch((err: unknown) => (stop.abort(err), err)),
  );
  const failures = (await Promise.all(workers)).filter((outcome) => outcome !== undefined);
  if (failures.length) throw failures[0];
  return posting;
}

async function postBatch(
  load: ChargeLoad,
  posting: Posting,
  batch: unknown[],
  k: number,
  signal: AbortSignal,
): Promise<void> {
  const key = randomUUID();
  const body = JSON.stringify(batch);
  for (let attempt = 0; ; attempt++) {
    signal.throwIfAborted();
    const gateway = load.gateways[(k + attempt) % load.gateways.length];
    const res = await fetch(`${gateway}/api/v1/accounts-receivable`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${load.accessToken}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]),
    }).catch(() => undefined);
    const text = await res?.text().catch(() => '');
    if (res?.status === 202) {
      posting.accepted.push({ at: Date.now(), size: batch.length, gateway });
      return;
    }
    if (res?.status === 429) {
      posting.limited += 1;
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    } else if (!res || res.status === 503 || (res.status === 409 && text?.includes('request_in_progress'))) {
      posting.unavailable += 1;
      await sleep(500);
    } else {
      throw new Error(`POST /accounts-receivable to ${gateway} answered ${res.status}: ${text}`);
    }
  }
}

/**
 * The most charges accepted beyond what one token bucket of `burst`, refilled at `perSecond`, allows
 * from the first POST on (0: the limit held): accepted by time t <= burst + perSecond * (t - start).
 * Acceptance is taken at the answer's arrival, after the server took the tokens, so it errs towards
 * holding; one bucket per gateway would let up to twice as much through.
 */
export function rateLimitExcess(posting: Posting, perSecond: number, burst: number): number {
  let total = 0;
  let worst = 0;
  for (const a of [...posting.accepted].sort((x, y) => x.at - y.at)) {
    total += a.size;
    worst = Math.max(worst, total - (burst + (perSecond * (a.at - posting.startedAt)) / 1000));
  }
  return worst;
}
