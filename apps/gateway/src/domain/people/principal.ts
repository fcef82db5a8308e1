import { ServiceError } from '@payments/contracts';
import type { Kysely } from 'kysely';
import { findActiveOperator } from '../tenancy/operators';
import type { GatewayDatabase } from '../../db/schema';
import type { Clock, Principal, RequestOrigin } from './people';
import { useSession, type OpenSession } from './sessions';

/**
 * Who calls an admin route, from its Authorization header: `Bearer opk_...` (an operator credential,
 * the admin API's own) or `Session ses_...` (a console session, moved forward by the use).
 */
export type Caller =
  { kind: 'credential'; principal: Principal } | { kind: 'session'; principal: Principal; session: OpenSession };

const SESSION_HEADER = /^Session\s+(\S+)\s*$/i;
const BEARER_HEADER = /^Bearer\s+(\S+)\s*$/i;

/** The session id of an `Authorization: Session <id>` header, if it has that form. */
export function sessionCredential(header: string | undefined): string | undefined {
  return SESSION_HEADER.exec(header ?? '')?.[1];
}

/**
 * The caller, or 401: unauthorized without a credential of either kind or with an unknown operator
 * credential; session_ended (SessionEndedError, said by the route) for a session that no longer stands.
 */
export async function callerOf(
  deps: { db: Kysely<GatewayDatabase>; clock: Clock },
  authorization: string | undefined,
  origin: RequestOrigin,
): Promise<Caller> {
  const sessionId = sessionCredential(authorization);
  if (sessionId !== undefined) {
    const session = await useSession(deps, sessionId, origin);
    const { role, tenant_id } = session.view;
    const principal: Principal =
      role === 'operator' || tenant_id === null
        ? { kind: 'operator', by: session.by }
        : { kind: 'tenant', role, tenantId: tenant_id, by: session.by };
    return { kind: 'session', principal, session };
  }
  const credential = BEARER_HEADER.exec(authorization ?? '')?.[1];
  if (credential === undefined)
    throw new ServiceError(
      'unauthorized',
      'send Authorization: Session <session id> (a console session) or Bearer <operator credential>',
    );
  const operator = await findActiveOperator(deps.db, credential);
  if (!operator) throw new ServiceError('unauthorized', 'this operator credential is unknown or was revoked');
  return {
    kind: 'credential',
    principal: {
      kind: 'operator',
      by: { operator: operator.name, source: 'admin_api', address: origin.address, requestId: origin.requestId },
    },
  };
}
