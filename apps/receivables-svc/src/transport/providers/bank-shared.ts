import type { CallLimit, WaitReason } from '../../db/call-budget';

/** What a bank account's clients share across instances, and what they tell operators. */

/** The per-minute budgets shared by every instance (Postgres: db/call-budget.ts). */
export interface BankCallBudget {
  take(
    bucket: string,
    endpoint: string,
    limit: CallLimit,
    onWait?: (reason: WaitReason, ms: number) => void,
  ): Promise<void>;
  block(bucket: string, endpoint: string, until: Date, limit: CallLimit): Promise<void>;
}

/** The one token per bank account and API shared by every instance (Postgres: db/bank-tokens.ts). */
export interface BankTokenStore {
  /** `prepare` runs before the lock is taken, only when no usable token is stored (the token budget). */
  token(
    key: string,
    issue: () => Promise<{ value: string; usableForMs: number }>,
    prepare?: () => Promise<void>,
  ): Promise<{ value: string; usableUntil: number }>;
  drop(key: string, failed: string): Promise<void>;
}

/** What instances share about a bank account: its budgets (one per endpoint, `token` included) and its tokens. */
export interface BankShared<E extends string> {
  budget: BankCallBudget;
  tokens: BankTokenStore;
  limits: Record<E | 'token', CallLimit>;
}

/** Told what operators must see (metrics and warning logs in the service; never a secret). */
export interface BankObserver {
  /** A call waited for its budget (or for the bank's Retry-After). */
  waited?(accountId: string, endpoint: string, reason: WaitReason, ms: number): void;
  /** The bank answered 429. */
  rateLimited?(accountId: string, endpoint: string, retryAfterMs: number): void;
  /** The bank answered 403: calls to the endpoint wait `delayMs` (growing while it lasts). */
  forbidden?(accountId: string, endpoint: string, delayMs: number): void;
  /** The account's webhook points elsewhere and is not replaced (no --replace-webhook). */
  webhookConflict?(accountId: string, registeredUrl: string, ourUrl: string): void;
}
