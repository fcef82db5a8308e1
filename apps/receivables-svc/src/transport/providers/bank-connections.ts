import type { OpenedCredentials } from './credentials';
import { ProviderUnavailableError, type ProviderAccount } from '../../domain/ports';
import { checkingAccountHeader, type BankAccountClient } from './bank-client';
import type { BankObserver, BankShared } from './bank-shared';
import { newWebhookSetupState, type WebhookSetupState } from './webhook-setup';

/** What a bank API adapter needs to connect to its accounts; one instance serves every account. */
export interface BankConnectionOptions<E extends string> {
  /** The credentials for a call on an account's behalf (the newest of its bank account), opened. */
  credentials(account: ProviderAccount): Promise<OpenedCredentials>;
  /** The account's base URL when it names none. */
  defaultBaseUrl?: string;
  /** Deadline of one HTTP exchange (connect to the end of the answer). */
  timeoutMs: number;
  /**
   * A CA to trust besides the public ones (the bank sandbox's); unset in production. A function is
   * called at an account's first call (the development sandbox creates its CA on its first start).
   */
  trustedCaPem?: string | (() => string | undefined);
  /** Budgets and token shared by every instance (Postgres); without it, each instance keeps its own token, unpaced. */
  shared?: BankShared<E>;
  observer?: BankObserver;
}

/** What every client of a bank account is made from (the API's own options are added by the adapter). */
export interface BankClientBasics<E extends string> {
  credentials: OpenedCredentials['credentials'];
  timeoutMs: number;
  trustedCa: () => string | undefined;
  /** The bank account (tenant and account key): the key of its shared budgets. */
  bankAccount: string;
  accountId: string;
  checkingAccount: string | null;
  shared?: BankShared<E>;
  observer?: BankObserver;
}

/** One bank account's connection to one API, and what is kept for it while connections come and go. */
export interface BankConnection<C> {
  client: C;
  /** The account's base URL (trailing slashes dropped), '' when neither it nor the default names one. */
  baseUrl: string;
  /** What the client was made from: credentials version, checking account, base URL. */
  identity: string;
  /** The bank account's webhook setup (kept when the connection is made again). */
  webhook: WebhookSetupState;
}

/**
 * The connections of one bank API adapter, one per bank account (tenant and account key, shared by the
 * versions of one account): when its credentials, checking account or base URL change (a renewed
 * certificate), the old connection is closed and a new one made; the webhook setup is kept.
 */
export class BankConnections<E extends string, C extends BankAccountClient<E>> {
  private readonly byBankAccount = new Map<string, BankConnection<C>>();

  /** `connect` makes the client (it may throw, e.g. a ProviderUnavailableError for what the account lacks). */
  constructor(
    private readonly options: BankConnectionOptions<E>,
    private readonly connect: (basics: BankClientBasics<E>, baseUrl: string, account: ProviderAccount) => C,
  ) {}

  async opened(account: ProviderAccount): Promise<OpenedCredentials> {
    try {
      return await this.options.credentials(account);
    } catch (err) {
      // The source's message names the account, never the secret.
      throw new ProviderUnavailableError((err as Error).message);
    }
  }

  /** The bank account's connection (made on first use; see of). */
  async of(account: ProviderAccount): Promise<BankConnection<C>> {
    return this.for(account, await this.opened(account));
  }

  /** The bank account's connection for these credentials: the current one, or a new one in its place. */
  for(account: ProviderAccount, opened: OpenedCredentials): BankConnection<C> {
    const key = bankAccountOf(account);
    const checkingAccount = checkingAccountHeader(account.beneficiary.account);
    const baseUrl = (account.baseUrl ?? this.options.defaultBaseUrl ?? '').replace(/\/+$/, '');
    const identity = `${opened.versionId} ${checkingAccount ?? ''} ${baseUrl}`;
    const current = this.byBankAccount.get(key);
    if (current && current.identity === identity) return current;
    const trusted = this.options.trustedCaPem;
    const basics: BankClientBasics<E> = {
      credentials: opened.credentials,
      timeoutMs: this.options.timeoutMs,
      trustedCa: typeof trusted === 'function' ? trusted : () => trusted,
      bankAccount: key,
      accountId: account.id,
      checkingAccount,
      shared: this.options.shared,
      observer: this.options.observer,
    };
    const connection: BankConnection<C> = {
      client: this.connect(basics, baseUrl, account),
      baseUrl,
      identity,
      webhook: current?.webhook ?? newWebhookSetupState(),
    };
    this.byBankAccount.set(key, connection);
    if (current) void current.client.close().catch(() => undefined);
    return connection;
  }

  /** Token requests made so far for an account's current connection (tests, metrics). */
  tokenRequestsOf(account: ProviderAccount): number {
    return this.byBankAccount.get(bankAccountOf(account))?.client.tokenRequests ?? 0;
  }

  /** Releases the connections (service stop, tests). */
  async close(): Promise<void> {
    const connections = [...this.byBankAccount.values()];
    this.byBankAccount.clear();
    await Promise.all(connections.map((c) => c.client.close()));
  }
}

/** One bank account: the versions of a tenant's account that share its key share a connection. */
function bankAccountOf(account: ProviderAccount): string {
  return `${account.tenantId}:${account.accountKey}`;
}
