import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ADMIN_IDEMPOTENCY_TTL_HOURS, ServiceError } from '@payments/contracts';
import { CredentialSealError, open, seal, type Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import type { GatewayContext } from './context';
import { requestBody } from './json-body';
import type { HttpResponse } from './problem';
import { fingerprint, readIdempotencyKey, runIdempotently } from '../../domain/idempotency/idempotency';
import {
  IdempotencyStore,
  type BeginOutcome,
  type HolderOutcome,
  type LockHold,
  type RequestIdentity,
  type StoredResponse,
} from '../../db/idempotency-store';

/**
 * The Idempotency-Key of the admin calls that answer a secret (create tenant, issue token, rotate the
 * signing secret): a reload, a double click or a client's retry answers the first call's secret again
 * and does not act twice (docs/api.md, "Idempotency"). It is the public API's store and rules
 * (idempotency/*), on the same table and swept by the same sweep, with three differences:
 * - keys belong to an operator and a route, not to a tenant: the key's scope, the table's tenant_id
 *   column, is a UUID derived from both (no tenant has it: tenant ids are random v4 UUIDs);
 * - the answer is stored sealed with the gateway's keyring, as provider credentials and signing
 *   secrets are, bound to its scope, key and request: a row read or copied elsewhere opens nothing;
 * - only a success is stored: a refusal did nothing, so the same key may be sent again (after
 *   confirming an overlap, say) rather than replaying the refusal.
 */

/**
 * A lock is never taken over before the key expires: an admin call that died mid-way (a gateway
 * crash between the action's commit and storing its answer) may have acted, so a retry with its key
 * gets 409 rather than a second secret; the operator checks the audit and uses a new key.
 */
const ADMIN_LOCK_TIMEOUT_MS = ADMIN_IDEMPOTENCY_TTL_HOURS * 3_600_000;

/** What the caller runs once per key: the answer to send (a 2xx is stored). */
export type AdminAction = () => Promise<HttpResponse>;

export class AdminIdempotency {
  private readonly store: SealedAnswerStore;

  constructor(db: Kysely<GatewayDatabase>, keyring: Keyring) {
    this.store = new SealedAnswerStore(
      new IdempotencyStore(db, ADMIN_IDEMPOTENCY_TTL_HOURS, ADMIN_LOCK_TIMEOUT_MS),
      keyring,
    );
  }

  /**
   * Runs `action` for this request, at most once per (operator, Idempotency-Key, route) when the
   * request has a key, and writes its answer (or the stored one, with Idempotent-Replayed: true).
   * `path` is the request's, with its ids as the route checked them (a tenant id in lower case).
   */
  async run(ctx: GatewayContext, operator: string, path: string, action: AdminAction): Promise<void> {
    const key = readIdempotencyKey(ctx.get('idempotency-key'), 'optional');
    const identity: RequestIdentity | undefined =
      key === undefined
        ? undefined
        : {
            tenantId: adminKeyScope(operator, `${ctx.method} ${path}`),
            key,
            method: ctx.method,
            path,
            fingerprint: fingerprint(ctx.method, path, requestBody(ctx)),
          };
    const response = await runIdempotently(this.store, identity, action, (err) => {
      // A refusal is not stored: runIdempotently releases the key when the action throws.
      throw err;
    });
    ctx.status = response.status;
    for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value);
    ctx.body = response.body;
  }
}

/**
 * The scope of an operator's keys on one route, as a UUID (the column's type): SHA-256 over both,
 * shaped as an RFC 9562 version 8 (custom) UUID, so it never equals a tenant's random v4 id.
 */
export function adminKeyScope(operator: string, route: string): string {
  const hex = createHash('sha256').update(`admin-idempotency\0${operator}\0${route}`).digest('hex');
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return [
    hex.slice(0, 8),
    hex.slice(8, 12),
    `8${hex.slice(13, 16)}`,
    `${variant}${hex.slice(17, 20)}`,
    hex.slice(20, 32),
  ].join('-');
}

/** What a stored answer is sealed for: its scope, key and request; another row's answer does not open. */
function answerBinding(req: RequestIdentity): string {
  return `admin-idempotency:${req.tenantId}:${req.fingerprint}:${req.key}`;
}

/**
 * The store with the answer's body sealed on the way in and opened on the way out. Refusals never
 * reach `complete` (see AdminIdempotency), so what is sealed is always a success holding a secret.
 */
class SealedAnswerStore implements Pick<IdempotencyStore, 'begin' | 'complete' | 'release'> {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly keyring: Keyring,
  ) {}

  async begin(req: RequestIdentity): Promise<BeginOutcome> {
    const outcome = await this.store.begin(req);
    if (outcome.kind !== 'replay') return outcome;
    return { kind: 'replay', response: { ...outcome.response, body: this.open(req, outcome.response.body) } };
  }

  complete(req: RequestIdentity, hold: LockHold, response: StoredResponse): Promise<HolderOutcome> {
    return this.store.complete(req, hold, { ...response, body: seal(this.keyring, response.body, answerBinding(req)) });
  }

  release(req: RequestIdentity, hold: LockHold): Promise<HolderOutcome> {
    return this.store.release(req, hold);
  }

  private open(req: RequestIdentity, sealed: string): string {
    try {
      return open(this.keyring, sealed, answerBinding(req));
    } catch (err) {
      // Sealed with a key since dropped from CREDENTIALS_PREVIOUS_KEYS: the action ran, its answer is lost.
      if (err instanceof CredentialSealError)
        throw new ServiceError(
          'conflict',
          'this Idempotency-Key was used already, and its answer can no longer be opened (the credentials key changed): check the audit, then use a new key',
        );
      throw err;
    }
  }
}
