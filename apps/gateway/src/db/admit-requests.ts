import { sql, type Kysely } from 'kysely';
import type { GatewayDatabase } from './schema';

/** A token bucket: holds up to `burst` tokens, refilled at `perSecond`. */
export interface BucketShape {
  perSecond: number;
  burst: number;
}

/** A request at the door: its charge (when the limit counts it) and its key (when it has one). */
export interface DoorRequest {
  /** The bucket charged (`tenant:<id>`), or undefined when nothing is charged. */
  bucket?: string;
  cost: number;
  key?: { tenantId: string; key: string; method: string; path: string; fingerprint: string };
  /** Written with its key's claim: only the attempt holding it may complete or release the key. */
  lockToken?: string;
}

/** What admit_requests answered for one request. */
export interface DoorAnswer {
  /** Whether the limit let it through; when not, in how many ms it could (Infinity: never, too large). */
  taken: boolean;
  retryAfterMs: number;
  /** Whether its key is now its own. */
  claimed: boolean;
  /** Otherwise the key's record as found (undefined when there was none to see). */
  record?: {
    fingerprint: string;
    lockedAt: Date | null;
    statusCode: number | null;
    responseBody: string | null;
    responseHeaders: Record<string, string> | null;
  };
}

interface Row {
  taken: boolean;
  retry_after_ms: number | null;
  claimed: boolean;
  fingerprint: string | null;
  locked_at: Date | null;
  status_code: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

/**
 * Charges and claims for many requests in one round trip and one commit: the admit_requests function
 * (migration 0008; its version with lock tokens, migration 0011), which locks the buckets and keys it touches in key order, so every gateway
 * instance shares each bucket and two of them never spend the same tokens; a bucket is refilled on
 * read from the time since its last take. Keys expire `ttlHours` after `now`.
 *
 * The buckets are in SQL rather than rate-limiter-flexible's Postgres store: that store counts fixed
 * windows (a tenant could send twice the burst across a window's edge) and creates its table at run
 * time, outside the migrations.
 */
export async function admitRequests(
  db: Kysely<GatewayDatabase>,
  requests: readonly DoorRequest[],
  shape: BucketShape,
  now: Date,
  ttlHours: number,
): Promise<DoorAnswer[]> {
  if (requests.length === 0) return [];
  const column = <T>(pick: (r: DoorRequest) => T) => requests.map(pick);
  const expiresAt = new Date(now.getTime() + ttlHours * 3_600_000);
  const { rows } = await sql<Row>`
    select * from admit_requests(${column((r) => r.bucket ?? null)}::text[], ${column((r) => r.cost)}::float8[],
      ${shape.burst}::float8, ${shape.perSecond}::float8, ${column((r) => r.key?.tenantId ?? null)}::uuid[],
      ${column((r) => r.key?.key ?? null)}::text[], ${column((r) => r.key?.method ?? null)}::text[],
      ${column((r) => r.key?.path ?? null)}::text[], ${column((r) => r.key?.fingerprint ?? null)}::text[],
      ${column((r) => (r.key ? (r.lockToken ?? null) : null))}::uuid[], ${now}::timestamptz, ${expiresAt}::timestamptz)`.execute(
    db,
  );
  if (rows.length !== requests.length) throw new Error(`admit_requests answered ${rows.length} of ${requests.length}`);
  return rows.map(toAnswer);
}

function toAnswer(row: Row): DoorAnswer {
  return {
    taken: row.taken,
    retryAfterMs: row.retry_after_ms === null ? 0 : Number(row.retry_after_ms),
    claimed: row.claimed,
    record:
      row.fingerprint === null
        ? undefined
        : {
            fingerprint: row.fingerprint,
            lockedAt: row.locked_at,
            statusCode: row.status_code,
            responseBody: row.response_body,
            responseHeaders: row.response_headers,
          },
  };
}

/**
 * Removes the buckets named `<name>:...` (for each of `names`) untouched for `idleMs`: a bucket that
 * refills completely within `idleMs` is full by then, and a missing bucket is created full, so nothing
 * a client could notice changes. A bucket taken from meanwhile is left (its row is locked and its
 * updated_at moves on).
 */
export async function deleteFullBuckets(db: Kysely<GatewayDatabase>, names: string[], idleMs: number): Promise<number> {
  if (names.length === 0) return 0;
  // Postgres' clock, the one admit_requests stamps updated_at with.
  const deleted = await db
    .deleteFrom('rate_limit_buckets')
    .where('updated_at', '<', sql<Date>`now() - ${idleMs} * interval '1 millisecond'`)
    .where((eb) => eb.or(names.map((name) => eb('key', 'like', `${name}:%`))))
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
