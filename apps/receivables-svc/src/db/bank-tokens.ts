import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { open, seal, type Keyring } from '@payments/credential-seal';
import type { ReceivablesDatabase } from './schema';

/** A token as the bank issued it: its value and how long it may be used from now. */
export interface IssuedToken {
  value: string;
  usableForMs: number;
}

/**
 * One OAuth token per bank account for every instance: kept sealed (the credentials keyring, bound to
 * the bank account) in Postgres. Only one token request per bank account is ever under way: it is made
 * under the row's lock, and whoever waited for that lock finds the new token instead of asking again.
 * A 401 drops the token that failed (compared by digest), never a newer one another call put there.
 */
export class PostgresBankTokens {
  constructor(
    private readonly db: Kysely<ReceivablesDatabase>,
    private readonly keyring: Keyring,
  ) {}

  /** The bank account's stored token while it is usable; otherwise one got by `issue` (one request at a time). */
  async token(bankAccount: string, issue: () => Promise<IssuedToken>): Promise<{ value: string; usableUntil: number }> {
    const stored = await this.usable(this.db, bankAccount, false);
    if (stored) return stored;
    return this.db.transaction().execute(async (trx) => {
      await sql`insert into bank_tokens (bank_account) values (${bankAccount}) on conflict do nothing`.execute(trx);
      const locked = await this.usable(trx, bankAccount, true);
      if (locked) return locked; // another instance got one while this one waited for the lock
      const issued = await issue();
      const usableUntil = Date.now() + issued.usableForMs;
      await trx
        .updateTable('bank_tokens')
        .set({
          sealed_token: seal(this.keyring, issued.value, binding(bankAccount)),
          token_digest: digest(issued.value),
          usable_until: new Date(usableUntil),
        })
        .where('bank_account', '=', bankAccount)
        .execute();
      return { value: issued.value, usableUntil };
    });
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

  private async usable(
    db: Kysely<ReceivablesDatabase>,
    bankAccount: string,
    lock: boolean,
  ): Promise<{ value: string; usableUntil: number } | null> {
    let query = db
      .selectFrom('bank_tokens')
      .select(['sealed_token', 'usable_until'])
      .where('bank_account', '=', bankAccount);
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
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
