import type { ColumnType, Generated } from 'kysely';
import type { AuditSource, Beneficiary, ConsoleRole, ProviderKind } from '@payments/contracts';
import type { AdminAction, AuditDetails } from '../domain/tenancy/admin-audit';

/** Tables of schema `gateway`. */
export interface TenantsTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  /** The Standard Webhooks secret (whsec_...) that signs this tenant's callbacks, sealed (libs/credential-seal). */
  sealed_signing_secret: string;
  /** The secret before the last rotation, sealed; it signs too until previous_valid_until. */
  sealed_previous_signing_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_valid_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  signing_secret_rotated_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, never, never>;
  disabled_at: Date | null;
}

export interface IntegrationTokensTable {
  id: string;
  tenant_id: string;
  /** SHA-256 of the token: the token itself is shown once and never stored. */
  token_hash: Buffer;
  /** First characters of the token, to tell tokens apart in listings. */
  token_hint: string;
  created_at: ColumnType<Date, never, never>;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  method: string;
  path: string;
  fingerprint: string;
  /** Set while the first request runs; null once its response is stored. */
  locked_at: Date | null;
  /** Random, written with each lock (migration 0010): only the attempt holding it completes or releases the key. */
  lock_token: ColumnType<string | null, string | null | undefined, string | null>;
  status_code: number | null;
  response_body: string | null;
  response_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  created_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
}

export interface JwtKeysTable {
  kid: string;
  private_key_pem: string;
  public_key_pem: string;
  created_at: Generated<Date>;
}

/** One immutable version of a tenant's provider account; the current one has superseded_at null. */
export interface ProviderAccountsTable {
  /** The version id (ProviderAccountVersion.account_id); the sealed credentials are bound to it. */
  id: string;
  tenant_id: string;
  provider: ProviderKind;
  /** ProviderAccountVersion.account_key: the same bank account across versions. */
  account_key: string;
  beneficiary: ColumnType<Beneficiary, string, never>;
  base_url: string | null;
  /** InterCredentials as JSON, sealed (libs/credential-seal); null for the sandbox. */
  sealed_credentials: string | null;
  created_at: ColumnType<Date, never, never>;
  superseded_at: ColumnType<Date | null, never, Date>;
}

/** One operator action (apps/gateway/src/domain/tenancy/admin-audit.ts); never a secret in it. */
export interface AdminAuditTable {
  /** bigint identity: pg returns it as a string. */
  id: ColumnType<string, never, never>;
  at: ColumnType<Date, never, never>;
  operator: string;
  action: AdminAction;
  tenant_id: string | null;
  details: ColumnType<AuditDetails, string, never>;
  /** Migration 0014: where the action came from, the client address, the request id, the console user. */
  source: ColumnType<AuditSource | null, AuditSource | null | undefined, never>;
  address: ColumnType<string | null, string | null | undefined, never>;
  request_id: ColumnType<string | null, string | null | undefined, never>;
  user_id: ColumnType<string | null, string | null | undefined, never>;
  user_email: ColumnType<string | null, string | null | undefined, never>;
}

/** A person who signs in to the console (migration 0013, people/*). */
export interface ConsoleUsersTable {
  id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  tenant_id: string | null;
  /** argon2id, PHC string. */
  password_hash: string;
  /** The TOTP secret (base32), sealed (libs/credential-seal) and bound to the user id. */
  sealed_totp_secret: string;
  /** The last TOTP time step accepted: a code is taken once. pg returns bigint as a string. */
  totp_last_step: ColumnType<string, string | undefined, string>;
  created_at: ColumnType<Date, never, never>;
  revoked_at: Date | null;
  last_sign_in_at: Date | null;
}

/** A one-time invitation; the token is stored as its SHA-256 only. */
export interface ConsoleInvitationsTable {
  id: string;
  token_hash: Buffer;
  email: string;
  role: ConsoleRole;
  tenant_id: string | null;
  /** Generated on the first read, sealed and bound to the invitation id, until accepted. */
  sealed_totp_secret: string | null;
  invited_by: string;
  created_at: ColumnType<Date, never, never>;
  expires_at: Date;
  accepted_at: Date | null;
  user_id: string | null;
}

/** A console session; its id is stored as its SHA-256 only. */
export interface ConsoleSessionsTable {
  id_hash: Buffer;
  role: ConsoleRole;
  tenant_id: string | null;
  /** The user signed in with a password; null for the development sign-ins. */
  user_id: string | null;
  /** Development: the integration token signed in with. */
  token_id: string | null;
  /** Development: the operator whose credential signed in. */
  operator_id: string | null;
  started_at: Date;
  expires_at: Date;
  idle_expires_at: Date;
  ended_at: Date | null;
  ended_reason: string | null;
  address: string | null;
}

/** One refused sign-in, counted by the sign-in limits for its key (`email:`, `address:`, ...). */
export interface ConsoleSignInFailuresTable {
  key: string;
  at: Date;
}

/** A token bucket (migration 0006): tokens left at updated_at; refilled on read. */
export interface RateLimitBucketsTable {
  key: string;
  tokens: number;
  updated_at: Date;
}

/** An operator of the admin API (migration 0007); the credential itself is shown once and never stored. */
export interface OperatorsTable {
  id: string;
  name: string;
  /** SHA-256 of the credential. */
  credential_hash: Buffer;
  credential_hint: string;
  created_at: ColumnType<Date, never, never>;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export interface GatewayDatabase {
  tenants: TenantsTable;
  integration_tokens: IntegrationTokensTable;
  idempotency_keys: IdempotencyKeysTable;
  jwt_keys: JwtKeysTable;
  provider_accounts: ProviderAccountsTable;
  admin_audit: AdminAuditTable;
  rate_limit_buckets: RateLimitBucketsTable;
  operators: OperatorsTable;
  console_users: ConsoleUsersTable;
  console_invitations: ConsoleInvitationsTable;
  console_sessions: ConsoleSessionsTable;
  console_sign_in_failures: ConsoleSignInFailuresTable;
}
