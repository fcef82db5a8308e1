import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { open, seal, type Keyring } from '@payments/credential-seal';
import type { ReceivablesDatabase } from './schema';

/** A token as the bank issued it: its value and how long it may be used from now. */
export interface IssuedToken {
  value: string;
  usableForMs: number;
}

/** Another instance held the lease to refresh the token for longer than the wait allowed. */
export class TokenRefreshTimeoutError extends Error {
  override readonly name = 'TokenRefreshTimeoutError';
}

/** How often an instance waiting for another's token refresh looks again. */
const POLL_MS = 100;

/**
 * One OAuth token per bank account for every instance: kept sealed (the credentials keyring, bound to
 * the bank account) in Postgres. Only one token request per bank account is ever under way: the
 * instance that takes the row's refresh lease (refreshing_until) asks the bank, the others wait for
 * the token it stores; no transaction stays open meanwhile. A lease left by a process that died ends
 * on its own. A 401 drops the token that failed (compared by digest), never a newer one.
 */
export class PostgresBankTokens {
  constructor(
    private readonly db: Kysely<ReceivablesDatabase>,
    private readonly keyring: Keyring,
    /** How long a refresh may take (the token budget's wait and the request): the lease, and the others' wait. */
    private readonly leaseMs = 60_000,
  ) {}

  /**
   * The bank account's stored token while it is usable; otherwise one got by `issue`, one request at a
   * time for all instances. `prepare` (the token's call budget) runs only in the instance that asks.
   */
  async token(
    bankAccount: string,
    issue: () => Promise<IssuedToken>,
    prepare?: () => Promise<void>,
  ): Promise<{ value: string; usableUntil: number }> {
    const deadline = Date.now() + this.leaseMs;
    for (;;) {
      const stored = await this.usable(bankAccount);
      if (stored) return stored;
      if (await this.lease(bankAccount)) {
        try {
          // Stored by another instance between the read above and this lease: no request.
          const again = await this.usable(bankAccount);
          if (again) return again;
          await prepare?.();
          const issued = await issue();
          const usableUntil = Date.now() + issued.usableForMs;
          await this.db
            .updateTable('bank_tokens')
            .set({
              sealed_token: seal(this.keyring, issued.value, binding(bankAccount)),
              token_digest: digest(issued.value),
              usable_until: new Date(usableUntil),
            })
            .where('bank_account', '=', bankAccount)
            .execute();
          return { value: issued.value, usableUntil };
        } finally {
          await this.db
            .updateTable('bank_tokens')
            .set({ refreshing_until: null })
            .where('bank_account', '=', bankAccount)
            .execute();
        }
      }
      if (Date.now() > deadline)
        throw new TokenRefreshTimeoutError(`the token of ${bankAccount} is being refreshed elsewhere for too long`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Drops the token that failed, if it is still the stored one. */
  async drop(bankAccount: string, failed: string): Promise<void> {
    await this.db
      .updateTable('bank_tokens')
      .set({ sealed_token: null, token_digest: null, usable_until: null })
      .where('bank_account', '=', bankAccount)
      .where('token_digest', '=', digest(failed))
      .execute();
  }

  /** Takes the refresh lease when nobody holds it (or its holder's lease ran out); true when taken. */
  private async lease(bankAccount: string): Promise<boolean> {
    const taken = await sql<{ bank_account: string }>`
      insert into bank_tokens (bank_account, refreshing_until)
      values (${bankAccount}, clock_timestamp() + ${`${this.leaseMs} milliseconds`}::interval)
      on conflict (bank_account) do update set refreshing_until = excluded.refreshing_until
        where bank_tokens.refreshing_until is null or bank_tokens.refreshing_until < clock_timestamp()
      returning bank_account`.execute(this.db);
    return taken.rows.length > 0;
  }

  private async usable(bankAccount: string): Promise<{ value: string; usableUntil: number } | null> {
    const row = await this.db
      .selectFrom('bank_tokens')
      .select(['sealed_token', 'usable_until'])
      .where('bank_account', '=', bankAccount)
      .executeTakeFirst();
    if (!row?.sealed_token || !row.usable_until || row.usable_until.getTime() <= Date.now()) return null;
    try {
      return {
        value: open(this.keyring, row.sealed_token, binding(bankAccount)),
        usableUntil: row.usable_until.getTime(),
      };
    } catch {
      return null; // sealed under a key no longer in the keyring: ask for a new one
    }
  }
}

function binding(bankAccount: string): string {
  return `bank-token:${bankAccount}`;
}

function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
