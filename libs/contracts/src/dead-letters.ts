/**
 * Dead letters ("Bad input and hostile peers"): a job message whose handler failed
 * JOB_MAX_FAILURES times, or that is poison (not JSON, or not its stream's messageSchema), is moved to
 * one stream, `<prefix>_dead_letters` (limits retention: kept until an operator re-drives it or the
 * stream's limits push it out), where the admin CLI lists and re-drives it:
 * `npm run admin -- jobs dead [--json]`, `npm run admin -- jobs redrive <id>`.
 *
 * A dead letter's body is the original message's bytes, unchanged (it may not even be JSON); what it
 * was and why it died travel in its headers (DeadLetterHeaders).
 */
export const DeadLetterStream = {
  /** Suffix of the stream name: `<prefix>_dead_letters`. */
  name: 'dead_letters',
  /** Subject relative to the prefix: `<prefix>.dead_letters`. */
  subject: 'dead_letters',
  /** A dead letter is published once per failed message (its id: `<stream>:<seq>`); a retry after a crash is dropped. */
  duplicateWindowMs: 10 * 60_000,
} as const;

/** The headers of a dead letter. */
export const DeadLetterHeaders = {
  /** The stream it was taken from, in full (`pay_registrations`). */
  stream: 'Payments-Dead-Stream',
  /** The subject it was published on (`pay.receivables.registration`): where a re-drive publishes it. */
  subject: 'Payments-Dead-Subject',
  /** Its Nats-Msg-Id as its producer first published it. */
  msgId: 'Payments-Dead-Msg-Id',
  /** The last error, one line, at most MAX_DEAD_LETTER_ERROR characters. */
  error: 'Payments-Dead-Error',
  /** Failures counted when it was dead-lettered (1 for poison). */
  failures: 'Payments-Dead-Failures',
  /** When it was dead-lettered, ISO 8601. */
  at: 'Payments-Dead-At',
} as const;

/**
 * The headers a failed job message's retry copy carries (libs/bus republishes a failed message with its
 * count, so the count survives restarts and follows the message to whichever instance takes it next).
 */
export const JobFailureHeaders = {
  failures: 'Payments-Job-Failures',
  lastError: 'Payments-Job-Last-Error',
  /** Epoch ms before which the copy is not handled (a failure's backoff). */
  notBefore: 'Payments-Job-Not-Before',
  /** The producer's Nats-Msg-Id, kept across copies. */
  msgId: 'Payments-Job-Msg-Id',
} as const;

/** Error texts in headers are cut to this many characters. */
export const MAX_DEAD_LETTER_ERROR = 500;

/** A dead letter as `jobs dead --json` prints it. */
export interface DeadLetterView {
  /** Its sequence in the dead-letter stream: what `jobs redrive <id>` takes. */
  id: number;
  stream: string;
  subject: string;
  msg_id: string;
  error: string;
  failures: number;
  /** ISO 8601. */
  dead_lettered_at: string;
  /** Size of the original message's body. */
  bytes: number;
}

/** What `jobs redrive <id> --json` prints. */
export interface RedriveResult {
  id: number;
  stream: string;
  /** The Nats-Msg-Id the message was published again with: `<original>:redrive:<id>`. */
  msg_id: string;
  /** True when the stream had already stored that id (a second re-drive of the same dead letter). */
  duplicate: boolean;
}

/** A re-driven message's Nats-Msg-Id: derived from the original and the dead letter, so a repeated re-drive is dropped. */
export function redriveMsgId(originalMsgId: string, deadLetterId: number): string {
  return `${originalMsgId}:redrive:${deadLetterId}`;
}
