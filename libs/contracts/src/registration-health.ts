import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common';
import { ProviderKinds } from './provider-accounts';

/**
 * The admin API's registration health: GET /admin/v1/registration-health, the charges
 * waiting for their bank to take them, per bank account, for the operator's health page.
 * receivables-svc answers from its queued charges; the gateway adds the tenants' names.
 */

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const WaitingBankAccountSchema = Type.Object(
  {
    tenant_id: Uuid(),
    tenant_name: Type.String(),
    provider: Type.Union(
      ProviderKinds.map((k) => Type.Literal(k)),
      { description: 'The provider kind of the account' },
    ),
    account_key: Type.String({ description: 'Which bank account (versions of one account share it)' }),
    base_url: Nullable(Type.String(), "The account's API root; null: the service's default for the kind"),
    waiting: Count('Charges accepted and not yet taken by the bank (registration queued)'),
    stuck: Count('Of those, how many wait longer than stuck_after_seconds'),
    oldest_since: Timestamp('When the longest waiting charge was accepted'),
    oldest_age_seconds: Count('How long the longest waiting charge has waited'),
    attempts: Count('The most attempts any of them has had that the bank did not take'),
    last_error: Nullable(
      Type.String({ maxLength: 200 }),
      "The bank's last answer (or our reason) for a charge it did not take; null before any such attempt",
    ),
    last_attempt_at: Nullable(Type.String({ format: 'date-time' }), 'When that attempt was made'),
  },
  { $id: 'WaitingBankAccount' },
);
export type WaitingBankAccount = Static<typeof WaitingBankAccountSchema>;

/** GET /admin/v1/registration-health: the bank accounts with charges waiting, the longest waiting first. */
export const RegistrationHealthSchema = Type.Object(
  {
    at: Timestamp('When it was read'),
    stuck_after_seconds: Count('A charge waiting longer than this is counted as stuck'),
    accounts: Type.Array(WaitingBankAccountSchema),
  },
  { $id: 'RegistrationHealth' },
);
export type RegistrationHealth = Static<typeof RegistrationHealthSchema>;

/** gateway -> receivables-svc: no parameters. */
export type RegistrationHealthCommand = Record<string, never>;
/** The answer without tenant names: the gateway joins them from its tenants table. */
export interface RegistrationHealthReply {
  at: string;
  stuck_after_seconds: number;
  accounts: Array<Omit<WaitingBankAccount, 'tenant_name'>>;
}
