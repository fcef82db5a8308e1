import { doublingDelayMs } from '@payments/backoff';
import type { Logger } from '@payments/logger';

/**
 * How long a start-up JetStream request (stream or consumer creation, the account check) is tried
 * again while the cluster is not ready. A stream leader's election takes about a second; a 3-node
 * cluster started together with the services needs a quorum first (seconds, more on a loaded
 * machine); and a node that lost its peers keeps answering as if it led for up to ~25 s (every
 * request then times out after 5 s). An orchestrator restarts a service that gives up anyway.
 */
export const STARTUP_RETRY_MS = 60_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/**
 * JetStream API errors (err_code) of a cluster that is not ready yet: no meta leader
 * (JSClusterNotAvailErr, "JetStream system temporarily unavailable"), a server that cannot handle the
 * request as things stand (JSClusterNotLeaderErr), incomplete results (JSClusterIncompleteErr), a
 * stream or consumer whose peers are not up (JSStreamOfflineErr, JSConsumerOfflineErr). Every other
 * API error (bad config, a config conflict, limits, no suitable peers, JetStream not enabled) is
 * final: trying again would give the same answer.
 */
const TRANSIENT_API_ERRORS = new Set([10004, 10008, 10009, 10118, 10119]);

interface NatsLikeError {
  code?: unknown;
  api_error?: { err_code?: number; description?: string };
}

/** A request that timed out, found no responders, or a JetStream API error of a cluster not ready yet. */
export function isTransientJetStreamError(err: unknown): boolean {
  const e = err as NatsLikeError | undefined;
  if (e?.api_error) return TRANSIENT_API_ERRORS.has(e.api_error.err_code ?? -1);
  // TIMEOUT: nobody answered within the request's timeout (a leader being elected, a lost quorum).
  // 503 without an API error is "no responders": JetStream's API is not subscribed to (yet).
  return e?.code === 'TIMEOUT' || e?.code === '503';
}

/** "No responders": a request nobody subscribes to (here: a server without JetStream, or one still starting it). */
export function isNoResponders(err: unknown): boolean {
  const e = err as NatsLikeError | undefined;
  return e?.code === '503' && !e.api_error;
}

/** Gave up on a start-up JetStream request after STARTUP_RETRY_MS of transient failures. */
export class JetStreamNotReadyError extends Error {
  override readonly name = 'JetStreamNotReadyError';
  /** Logged as a one-line start-up problem (libs/lifecycle), without a stack. */
  readonly startupProblem = true;
  readonly problem = 'jetstream_not_ready';

  constructor(what: string, tries: number, elapsedMs: number, cause: unknown) {
    super(
      `JetStream did not answer for ${what} in ${Math.round(elapsedMs / 1000)} s (${tries} ${tries === 1 ? 'try' : 'tries'}; last: ${describe(cause)}): ` +
        'check that the NATS cluster has a quorum and a JetStream meta leader (nats server report jetstream)',
      { cause },
    );
  }
}

export interface RetryOptions {
  /** Each retry is logged (warn) with what it is for. */
  logger?: Logger;
  /** How long transient failures are tried again; default STARTUP_RETRY_MS. */
  budgetMs?: number;
  /** The first wait, doubled per try up to maxDelayMs; default 250 ms. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Which errors are tried again; default isTransientJetStreamError. */
  isTransient?: (err: unknown) => boolean;
}

/**
 * Runs `attempt` and, while it fails with a transient error (isTransientJetStreamError), again
 * after a backoff (250 ms doubled per try, at most 5 s), logging each retry with `what` (e.g.
 * `stream pay_jobs`). Any other error is thrown at once; transient failures past the budget end in a
 * JetStreamNotReadyError. `attempt` must be safe to repeat (a create that timed out may have been done).
 */
export async function retryTransient<T>(what: string, attempt: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const budgetMs = opts.budgetMs ?? STARTUP_RETRY_MS;
  const isTransient = opts.isTransient ?? isTransientJetStreamError;
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err)) throw err;
      const elapsedMs = Date.now() - started;
      const retryInMs = doublingDelayMs(tries, {
        firstMs: opts.firstDelayMs ?? FIRST_DELAY_MS,
        maxMs: opts.maxDelayMs ?? MAX_DELAY_MS,
      });
      if (elapsedMs + retryInMs > budgetMs) throw new JetStreamNotReadyError(what, tries, elapsedMs, err);
      opts.logger?.warn(
        { target: what, try: tries, retryInMs, reason: describe(err) },
        `JetStream not ready for ${what} (${describe(err)}); trying again in ${retryInMs} ms`,
      );
      await new Promise((r) => setTimeout(r, retryInMs));
    }
  }
}

function describe(err: unknown): string {
  const e = err as NatsLikeError & { message?: string };
  if (e?.api_error?.description) return `${e.api_error.description} (${e.api_error.err_code ?? '?'})`;
  if (e?.code === '503') return 'no responders';
  return typeof e?.message === 'string' ? e.message : String(err);
}
