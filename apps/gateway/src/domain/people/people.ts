import type { Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import type { TenantRole } from '@payments/contracts';
import type { Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import type { AuditedBy } from '../tenancy/admin-audit';

/** What the people rules need: the store, the key that seals TOTP secrets, the mode, and the time. */
export interface PeopleDeps {
  db: Kysely<GatewayDatabase>;
  keyring: Keyring;
  mode: RunMode;
  /** The time of day; tests move it to reach the idle and absolute limits. */
  clock: Clock;
}

export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/**
 * Who calls a people route: an operator (an operator credential, or an operator's console session), or
 * a tenant user's console session; with what the audit records of them.
 */
export type Principal =
  { kind: 'operator'; by: AuditedBy } | { kind: 'tenant'; role: TenantRole; tenantId: string; by: AuditedBy };

/** Where a request came from, as the console passes it: the end user's address and the request id. */
export interface RequestOrigin {
  address: string;
  requestId: string;
}
