import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { MicroBatcher, type ItemOutcome } from '@payments/micro-batch';
import { admitRequests } from '../../db/admit-requests';
import type { GatewayDatabase } from '../../db/schema';
import type { BeginOutcome, IdempotencyStore, RequestIdentity } from '../../db/idempotency-store';
import type { GatewayContext } from './context';
import type { ChargeLimitSettings } from './rate-limit';

/** One request at the door: its tenant's charge and, when it carries one, its Idempotency-Key. */
interface AdmissionRequest {
  tenantId: string;
  charges: number;
  identity: RequestIdentity | undefined;
}

/** Whether the limit let a request through, and if not, in how many ms it could (Infinity: never). */
type Taken = { ok: true } | { ok: false; retryAfterMs: number };

type Admitted = { taken: Taken; begun: BeginOutcome | undefined };

/**
 * Requests admitted in one transaction at most. Under load one commit serves every request that
 * arrived while the previous ones were being admitted; a lone request is admitted at once.
 */
const ADMISSIONS_PER_COMMIT = 256;
/**
 * Admissions at once. Two: one commits while the next gathers; more would only queue on the same
 * tenants' bucket rows.
 */
const ADMISSIONS_RUNNING = 2;

/**
 * The door of every API operation: the tenant's rate limit (a token bucket per tenant, in Postgres, so
 * every gateway instance spends the same budget) and the claim of the request's Idempotency-Key, taken
 * in one statement (admit_requests, db/admit-requests.ts). A request refused by the limit claims
 * nothing, so it leaves no trace, not even under its key. Concurrent requests, of any tenants, are
 * admitted together: one round trip and one commit for all of them, instead of two of each per request.
 */
export class Admissions {
  private readonly batches: MicroBatcher<AdmissionRequest, Admitted>;

  constructor(
    db: Kysely<GatewayDatabase>,
    private readonly limit: ChargeLimitSettings,
    idempotency?: Pick<IdempotencyStore, 'settle' | 'ttlHours'>,
  ) {
    this.batches = new MicroBatcher({
      maxItems: ADMISSIONS_PER_COMMIT,
      maxRunning: ADMISSIONS_RUNNING,
      run: (requests) => admitAll(db, requests, limit, idempotency),
    });
  }

  /**
   * Charges `charges` to the request's tenant, less the `paid` it was charged already (its arrival
   * token, see http/endpoint.ts), and claims its key. Throws 429 rate_limited (with Retry-After) when
   * the tenant's budget lacks them, and for good when `charges` alone is more than the burst;
   * otherwise returns what the key's earlier request left behind (undefined without a key).
   */
  async admit(
    ctx: GatewayContext,
    charges: number,
    identity?: RequestIdentity,
    paid = 0,
  ): Promise<BeginOutcome | undefined> {
    const tenantId = ctx.state.tenantId ?? '';
    const limited = this.limit.perSecond > 0;
    // Checked on the whole request, not on what is left to pay: a batch larger than the burst never
    // fits, however long it waits.
    if (limited && charges > this.limit.burst) throw rateLimited(ctx, charges, this.limit, Infinity);
    const cost = limited ? Math.max(0, charges - paid) : 0;
    if (cost === 0 && !identity) return undefined;
    const { taken, begun } = await this.batches.submit({ tenantId, charges: cost, identity });
    if (!taken.ok) throw rateLimited(ctx, charges, this.limit, taken.retryAfterMs);
    return begun;
  }

  /**
   * As admit, for a read costing `tokens` (a search by the rows it may answer): at most the burst, so
   * a large page waits for a full bucket instead of being refused for good.
   */
  admitRead(
    ctx: GatewayContext,
    tokens: number,
    identity?: RequestIdentity,
    paid = 0,
  ): Promise<BeginOutcome | undefined> {
    return this.admit(ctx, Math.min(tokens, this.limit.burst), identity, paid);
  }
}

async function admitAll(
  db: Kysely<GatewayDatabase>,
  requests: AdmissionRequest[],
  limit: ChargeLimitSettings,
  idempotency: Pick<IdempotencyStore, 'settle' | 'ttlHours'> | undefined,
): Promise<Array<ItemOutcome<Admitted>>> {
  if (!idempotency && requests.some((r) => r.identity))
    throw new Error('admission with an Idempotency-Key needs the idempotency store');
  const now = new Date();
  // One per attempt: a retry that takes the key over later gets its own (IdempotencyStore.settle).
  const lockTokens = requests.map((r) => (r.identity ? randomUUID() : undefined));
  const answers = await admitRequests(
    db,
    requests.map((r, i) => ({
      bucket: r.charges > 0 ? `tenant:${r.tenantId}` : undefined,
      cost: r.charges,
      key: r.identity,
      lockToken: lockTokens[i],
    })),
    limit,
    now,
    idempotency?.ttlHours ?? 0,
  );
  return Promise.all(
    requests.map(async (r, i): Promise<ItemOutcome<Admitted>> => {
      const answer = answers[i];
      if (!answer.taken)
        return { ok: true, value: { taken: { ok: false, retryAfterMs: answer.retryAfterMs }, begun: undefined } };
      const begun =
        r.identity && idempotency ? await idempotency.settle(r.identity, answer, now, lockTokens[i]) : undefined;
      return { ok: true, value: { taken: { ok: true }, begun } };
    }),
  );
}

/** 429 rate_limited: for a while (Retry-After in seconds), or for good when the request is larger than the burst. */
function rateLimited(ctx: GatewayContext, charges: number, settings: ChargeLimitSettings, retryAfterMs: number) {
  if (!Number.isFinite(retryAfterMs))
    return new ServiceError(
      'rate_limited',
      `this request carries ${charges} charges, more than the ${settings.burst} a tenant may send at once; split it`,
    );
  ctx.set('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  return new ServiceError(
    'rate_limited',
    `more than ${settings.perSecond} charges per second (bursts of ${settings.burst}) for this tenant; retry later`,
  );
}
