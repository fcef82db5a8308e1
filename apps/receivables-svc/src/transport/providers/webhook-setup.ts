import { BankNetworkError } from './bank-errors';

/**
 * Pointing a bank account's webhook at us, the same way for every bank API (Inter's Cobrança webhook,
 * a PIX key's webhook): the URL the bank has is read first; none, or one of ours, is set to ours;
 * another URL is the tenant's and stays unless the account says replace (--replace-webhook): operators
 * are told, and charges still issue (reconciliation finds their payments).
 */

/** A webhook setup (or one under way) for one bank account, with what decided it. Kept per bank account. */
export interface WebhookSetupState {
  setup: { key: string; done: Promise<void>; failedAt: number | null } | null;
  /** A setup has ended once here (ours set, or another URL kept). */
  settled: boolean;
}

export function newWebhookSetupState(): WebhookSetupState {
  return { setup: null, settled: false };
}

/** How one bank API reads and sets the webhook. */
export interface WebhookEndpoint {
  /** The URL set at the bank, or null when none is. */
  read(): Promise<string | null>;
  write(url: string): Promise<void>;
}

export interface WebhookSetupOptions {
  ours: string;
  replace: boolean;
  /** Whether a URL the bank has is one of ours (any account version's). */
  owns(url: string): boolean;
  /** The bank has another URL, kept (no replace). */
  onConflict(registeredUrl: string): void;
  /** A setup that failed is tried again after this long (webhook endpoints allow few calls a minute). */
  retryMs: number;
}

/**
 * Runs the setup once per bank account (again `retryMs` after a failure, or when our URL or the
 * replace choice changes). Only a bank that does not answer at all stops the caller (BankNetworkError);
 * any other failure is retried later while charges issue. Once a setup has ended for the bank account,
 * a new one runs beside the caller instead of before it.
 */
export async function ensureWebhook(
  state: WebhookSetupState,
  endpoint: WebhookEndpoint,
  options: WebhookSetupOptions,
): Promise<void> {
  const key = `${options.ours} ${options.replace}`;
  const current = state.setup;
  const stale =
    current?.failedAt !== null && current?.failedAt !== undefined && Date.now() - current.failedAt > options.retryMs;
  if (!current || current.key !== key || stale) {
    const setup: NonNullable<WebhookSetupState['setup']> = { key, failedAt: null, done: Promise.resolve() };
    setup.done = setWebhook(endpoint, options).then(
      () => {
        state.settled = true;
      },
      (err: unknown) => {
        // No answer at all: tried again at the next batch; any other failure after retryMs.
        setup.failedAt = err instanceof BankNetworkError ? 0 : Date.now();
        throw err;
      },
    );
    // Handled here whether or not a batch waits for it (a failure is seen by the next setup).
    setup.done.catch(() => undefined);
    state.setup = setup;
  }
  if (state.settled) return;
  try {
    await state.setup?.done;
  } catch (err) {
    if (err instanceof BankNetworkError) throw err;
  }
}

async function setWebhook(endpoint: WebhookEndpoint, options: WebhookSetupOptions): Promise<void> {
  const registered = await endpoint.read();
  const owned = (url: string) => url === options.ours || options.owns(url);
  if (registered !== null && !owned(registered) && !options.replace) {
    options.onConflict(registered);
    return;
  }
  await endpoint.write(options.ours);
}
