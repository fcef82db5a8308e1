import type { Next } from 'koa';
import type Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { RunMode } from '@payments/config';
import {
  ADMIN_API_PREFIX,
  ADMIN_OPENAPI_DOCUMENT_PATH,
  buildAdminOpenApiDocument,
  type FieldError,
  parseStatsQuery,
  ServiceError,
  SIGNING_SECRET_MAX_AGE_MS,
  Subjects,
} from '@payments/contracts';
import type { Keyring } from '@payments/credential-seal';
import { AdminIdempotency } from '../admin-idempotency';
import {
  discardDeadLetter,
  pageDeadLetters,
  redriveDeadLetter,
  RedriveRefusedError,
  showDeadLetter,
} from '../../bus/jobs';
import type { GatewayDatabase } from '../../../db/schema';
import type { GatewayContext, GatewayState } from '../context';
import { uuidParam } from '../endpoint';
import { validationError } from '../problem';
import { pageAdminAudit, type AuditedBy } from '../../../domain/tenancy/admin-audit';
import { AdminError, AdminNotFoundError } from '../../../domain/tenancy/admin-error';
import { ProviderAccountInputError } from '../../../domain/tenancy/provider-account-input';
import { setProviderAccount, showProviderAccount } from '../../../domain/tenancy/provider-accounts';
import {
  overlapEndsOf,
  RotationOverlapRunningError,
  rotateSigningSecret,
} from '../../../domain/tenancy/signing-secrets';
import { mountDeliveryStatsRoutes } from './delivery-stats-routes';
import { mountRegistrationHealthRoutes } from './registration-health-routes';
import {
  createTenant,
  disableTenant,
  issueToken,
  listTenants,
  listTokens,
  revokeToken,
} from '../../../domain/tenancy/tenant-admin';
import { accountInput, fieldOfFlag } from './admin-account-input';
import {
  auditFilter,
  cursorParam,
  deadLetterParam,
  pageLimit,
  PROVIDER_ACCOUNT,
  ROTATE_SECRET,
  TENANT_CREATE,
  validBody,
} from './admin-params';

type Middleware = (ctx: GatewayContext, next: Next) => Promise<unknown>;

export interface AdminRouteDeps {
  db: Kysely<GatewayDatabase>;
  bus: Bus;
  /** Seals new tenants' signing secrets and inter credentials: the gateway's own key. */
  keyring: Keyring;
  /** What a new tenant gets: development ones a sandbox provider account at once. */
  mode: RunMode;
  /** The operator credential check, then the JSON body reader. */
  guard: Middleware;
  bodyParser: Middleware;
}

/**
 * The admin API on the admin port: the admin CLI's own domain functions behind HTTP, each
 * change audited under the operator whose credential called it (domain/tenancy/admin-audit). Secrets are
 * answered once, by the call that makes them.
 */
export function mountAdminRoutes(router: Router<GatewayState>, deps: AdminRouteDeps): void {
  const { db, bus, keyring, mode } = deps;
  const once = new AdminIdempotency(db, keyring);
  const p = ADMIN_API_PREFIX;
  const route = (method: 'GET' | 'POST' | 'PUT', path: string, handle: (ctx: GatewayContext) => Promise<void>) =>
    router.register(
      path,
      [method],
      [deps.guard, deps.bodyParser, async (ctx: GatewayContext) => adminCall(ctx, handle)],
    );

  route('GET', `${p}/tenants`, async (ctx) => {
    const [rows, overlapEnds] = await Promise.all([listTenants(db), overlapEndsOf(db)]);
    answer(ctx, 200, {
      items: rows.map((r) => ({
        tenant_id: r.tenant_id,
        name: r.name,
        status: r.status,
        created_at: r.created_at.toISOString(),
        active_tokens: Number(r.active_tokens),
        previous_secret_valid_until: overlapEnds.get(r.tenant_id) ?? null,
      })),
    });
  });

  // The three calls answering a secret take an Idempotency-Key: a repeat answers the same secret (admin-idempotency).
  route('POST', `${p}/tenants`, async (ctx) => {
    const body = validBody(ctx, TENANT_CREATE);
    await once.run(ctx, by(ctx).operator, `${p}/tenants`, async () => {
      const t = await createTenant(db, body.name, { mode, keyring, by: by(ctx) });
      const created = {
        tenant_id: t.tenant_id,
        name: t.name,
        token_id: t.token_id,
        integration_token: t.integration_token,
        signing_secret: t.signing_secret,
      };
      return { status: 201, body: created };
    });
    noStore(ctx);
  });

  route('POST', `${p}/tenants/:tenant_id/disable`, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    await disableTenant(db, tenantId, by(ctx));
    answer(ctx, 200, { tenant_id: tenantId, status: 'disabled' });
  });

  route('GET', `${p}/tenants/:tenant_id/tokens`, async (ctx) => {
    const rows = await listTokens(db, uuidParam(ctx, 'tenant_id'));
    answer(ctx, 200, {
      items: rows.map((r) => ({
        token_id: r.token_id,
        token_hint: r.token_hint,
        created_at: r.created_at.toISOString(),
        revoked_at: r.revoked_at?.toISOString() ?? null,
        last_used_at: r.last_used_at?.toISOString() ?? null,
      })),
    });
  });

  route('POST', `${p}/tenants/:tenant_id/tokens`, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    await once.run(ctx, by(ctx).operator, `${p}/tenants/${tenantId}/tokens`, async () => ({
      status: 201,
      body: await issueToken(db, tenantId, by(ctx)),
    }));
    noStore(ctx);
  });

  route('POST', `${p}/tokens/:token_id/revoke`, async (ctx) => {
    const r = await revokeToken(db, uuidParam(ctx, 'token_id'), by(ctx));
    answer(ctx, 200, { ...r, revoked: true });
  });

  route('GET', `${p}/tenants/:tenant_id/provider-account`, async (ctx) => {
    answer(ctx, 200, await showProviderAccount(db, uuidParam(ctx, 'tenant_id')));
  });

  route('PUT', `${p}/tenants/:tenant_id/provider-account`, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    const body = validBody(ctx, PROVIDER_ACCOUNT);
    answer(ctx, 200, await setProviderAccount(db, keyring, accountInput(tenantId, body, mode), by(ctx)));
  });

  route('POST', `${p}/tenants/:tenant_id/signing-secret/rotate`, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    const body = validBody(ctx, ROTATE_SECRET);
    await once.run(ctx, by(ctx).operator, `${p}/tenants/${tenantId}/signing-secret/rotate`, async () => {
      // Rotating during an overlap drops the secret before: only when the operator confirmed it.
      const rotated = await rotateSigningSecret(db, keyring, tenantId, body.overlap_hours ?? 24, by(ctx), {
        duringOverlap: body.confirm_overlap === true ? 'replace' : 'refuse',
      });
      // As the CLI does: callback-svc reuses what it was told for at most this long, so once the
      // answer arrives, every instance signs with the new secret.
      await new Promise((resolve) => setTimeout(resolve, SIGNING_SECRET_MAX_AGE_MS + 100));
      return { status: 200, body: rotated };
    });
    noStore(ctx);
  });

  route('GET', `${p}/dead-letters`, async (ctx) => {
    const errors: FieldError[] = [];
    const cursor = cursorParam(ctx, errors);
    const limit = pageLimit(ctx, errors);
    if (errors.length > 0) throw validationError(errors);
    const page = await pageDeadLetters(bus, { after: cursor, limit });
    answer(ctx, 200, { items: page.items, next_cursor: page.next === undefined ? null : String(page.next) });
  });

  route('GET', `${p}/dead-letters/:dead_letter_id`, async (ctx) => {
    answer(ctx, 200, await showDeadLetter(bus, deadLetterParam(ctx)));
  });

  route('POST', `${p}/dead-letters/:dead_letter_id/redrive`, async (ctx) => {
    answer(ctx, 200, await redriveDeadLetter(db, bus, deadLetterParam(ctx), by(ctx)));
  });

  route('POST', `${p}/dead-letters/:dead_letter_id/discard`, async (ctx) => {
    answer(ctx, 200, await discardDeadLetter(db, bus, deadLetterParam(ctx), by(ctx)));
  });

  route('GET', `${p}/audit`, async (ctx) => {
    const errors: FieldError[] = [];
    const filter = auditFilter(ctx, errors);
    const cursor = cursorParam(ctx, errors);
    const limit = pageLimit(ctx, errors);
    if (errors.length > 0) throw validationError(errors);
    const page = await pageAdminAudit(db, { ...filter, before: cursor, limit });
    answer(ctx, 200, { items: page.items, next_cursor: page.next === undefined ? null : String(page.next) });
  });

  // Registrations per bucket: receivables-svc answers from its per-minute aggregates.
  route('GET', `${p}/stats/registrations`, async (ctx) => {
    const query = parseStatsQuery(ctx.query);
    if (!query.ok) throw validationError(query.errors);
    answer(ctx, 200, await bus.request(Subjects.receivables.registrationStats, query.value));
  });

  // Deliveries per bucket and delivery health: callback-svc answers from its aggregates.
  mountDeliveryStatsRoutes(route, p, { db, bus }, answer);
  // Charges waiting for their bank, per bank account: receivables-svc answers.
  mountRegistrationHealthRoutes(route, p, { db, bus }, answer);

  // The admin document: no credential needed to read what the routes are.
  const documentJson = JSON.stringify(buildAdminOpenApiDocument());
  router.get(ADMIN_OPENAPI_DOCUMENT_PATH, (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = documentJson;
  });
}

/** The audited operator: every admin route runs behind the operator check, which sets it. */
function by(ctx: GatewayContext): AuditedBy {
  const operator = ctx.state.operator;
  if (operator === undefined) throw new Error('admin route reached without the operator check');
  return { operator };
}

function answer(ctx: GatewayContext, status: number, body: unknown): void {
  ctx.status = status;
  noStore(ctx);
  ctx.body = body;
}

function noStore(ctx: GatewayContext): void {
  ctx.set('cache-control', 'no-store'); // answers may hold a secret shown once
}

/**
 * The domain's refusals, said the public API's way: 404 for what does not exist, 422 naming the field
 * (or redrive_refused for a forged dead letter), else 409.
 */
async function adminCall(ctx: GatewayContext, handle: (ctx: GatewayContext) => Promise<void>): Promise<void> {
  try {
    await handle(ctx);
  } catch (err) {
    if (err instanceof ProviderAccountInputError) throw validationError([fieldOfFlag(err)], err.message);
    // Nothing was published; the refusal is audited (transport/bus/jobs.ts).
    if (err instanceof RedriveRefusedError) throw new ServiceError('redrive_refused', err.message);
    if (err instanceof AdminNotFoundError) throw new ServiceError('not_found', err.message);
    if (err instanceof RotationOverlapRunningError)
      throw new ServiceError('rotation_overlap_running', err.message, [
        { path: '/confirm_overlap', message: `must be true to rotate before ${err.overlapEndsAt}` },
      ]);
    if (err instanceof AdminError) throw new ServiceError('conflict', err.message);
    throw err;
  }
}
