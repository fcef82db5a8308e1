import { doublingDelayMs } from '@payments/backoff';
import { headers as natsHeaders, type JetStreamClient, type JsMsg, type MsgHdrs } from 'nats';
import {
  compileValidator,
  JobFailureHeaders,
  MESSAGE_VERSION_FIELD,
  streamVersion,
  versionProblem,
  type StreamSpec,
  type Validator,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { countWork } from '@payments/metrics';
import { oneLine, type DeadLetterBox } from './dead-letters';

/** How failing job messages are counted and given up on (the service's JOB_MAX_FAILURES). */
export interface JobFailureSettings {
  /** Failures (handler throws) after which a message is dead-lettered. JOB_MAX_FAILURES, default 10. */
  maxFailures: number;
  /** Delay before the retry after a first failure; doubled per failure, up to MAX_FAILURE_BACKOFF_MS. Default 1 s. */
  failureBackoffMs: number;
}

export const DEFAULT_JOB_MAX_FAILURES = 10;
/** With the defaults, 10 failures take about 8.5 min (1 + 2 + ... + 256 s): a short database outage does not kill jobs. */
export const MAX_FAILURE_BACKOFF_MS = 5 * 60_000;

/**
 * What the consumers do with a job message that failed (its handler threw) or is poison (not JSON, not
 * its stream's messageSchema, or of a major version the stream's reader does not know).
 *
 * Counting failures, and where the count lives. JetStream's redelivery count cannot be used alone: a
 * provider outage answers `{ retryInMs }` (a nak) and is not a failure of the job, yet it counts as
 * a redelivery too. The choices were:
 *  - a count in memory: lost on restart, and with N instances a message alternates between them, each
 *    counting its own share (up to N x the limit, or never, with restarts in between);
 *  - a NATS KV bucket keyed by stream and sequence: correct, but one more bucket to create, permit
 *    and clean (a key left behind for every message that failed once and then succeeded);
 *  - the count on the message itself: a failed message is published again (same subject and bytes)
 *    carrying its failure count, last error and earliest retry time in headers, and the original is
 *    acked. This is the one taken. The count travels with the message to whichever instance takes it
 *    next and survives restarts, and there is nothing to clean. The copy's Nats-Msg-Id is derived from
 *    the producer's id and the count, so when a crash comes between the publish and the ack, the
 *    redelivered original failing again publishes the same id and JetStream drops it. (If the original
 *    succeeds then, the copy runs once more: handlers are idempotent, as redelivery already requires.)
 */
export class JobFailures {
  private readonly validators = new WeakMap<object, Validator<unknown>>();

  constructor(
    private readonly js: () => JetStreamClient,
    private readonly deadLetters: DeadLetterBox,
    private readonly settings: JobFailureSettings,
    private readonly logger: Logger,
    private readonly onDeadLetter: (spec: StreamSpec) => void,
  ) {}

  /** How long a retry copy must still wait (0: handle it now). Waiting is a nak, not a failure. */
  static waitMs(m: JsMsg): number {
    const notBefore = Number(m.headers?.get(JobFailureHeaders.notBefore) ?? '');
    return Number.isFinite(notBefore) && notBefore > Date.now() ? notBefore - Date.now() : 0;
  }

  /** The failures counted so far (0 for a message as its producer published it). */
  static failuresOf(m: JsMsg): number {
    const n = Number(m.headers?.get(JobFailureHeaders.failures) ?? '');
    return Number.isInteger(n) && n > 0 ? n : 0;
  }

  /** The producer's Nats-Msg-Id, kept across retry copies; `<stream>:<seq>` for a message published without one. */
  static originalMsgId(m: JsMsg, stream: string): string {
    return m.headers?.get(JobFailureHeaders.msgId) || m.headers?.get('Nats-Msg-Id') || `${stream}:${m.seq}`;
  }

  /**
   * The message's payload, decoded and checked against the stream's messageSchema; undefined when it is
   * poison (then it has been dead-lettered, or is retried when that failed).
   */
  async decode<T>(spec: StreamSpec, stream: string, m: JsMsg): Promise<{ value: T } | undefined> {
    const checked = this.check<T>(spec, m);
    if (checked.ok) return { value: checked.value };
    await this.bury(spec, stream, m, checked.problem, JobFailures.failuresOf(m) + 1);
    return undefined;
  }

  /** As decode, without dead-lettering poison (undefined): a look at a message that is handled later. */
  peek<T>(spec: StreamSpec, m: JsMsg): T | undefined {
    const checked = this.check<T>(spec, m);
    return checked.ok ? checked.value : undefined;
  }

  private check<T>(spec: StreamSpec, m: JsMsg): { ok: true; value: T } | { ok: false; problem: string } {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(m.data));
    } catch (err) {
      return { ok: false, problem: `undecodable message: ${(err as Error).message}` };
    }
    const unsupported = takeVersion(spec, value);
    if (unsupported) return { ok: false, problem: unsupported };
    const checked = this.validator(spec)?.(value);
    if (checked && !checked.ok) {
      const problems = checked.errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ');
      return { ok: false, problem: `invalid message: ${problems}` };
    }
    return { ok: true, value: (checked?.ok ? checked.value : value) as T };
  }

  private validator(spec: StreamSpec): Validator<unknown> | undefined {
    const schema = spec.messageSchema;
    if (!schema) return undefined;
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = compileValidator(schema) as Validator<unknown>;
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * The handler threw: the message's failure is counted. Below the limit a copy carrying the count is
   * published (to be handled after a backoff) and the message acked; at the limit it is dead-lettered.
   * Settles `m` either way; when neither could be stored, `m` is nak'ed and this failure not counted.
   */
  async failed(spec: StreamSpec, stream: string, m: JsMsg, err: unknown): Promise<void> {
    const failures = JobFailures.failuresOf(m) + 1;
    const error = errorText(err);
    if (failures >= this.settings.maxFailures) return this.bury(spec, stream, m, error, failures);
    const delay = this.backoff(failures);
    const original = JobFailures.originalMsgId(m, stream);
    try {
      countWork('busPublishes');
      await this.js().publish(m.subject, m.data, {
        msgID: `${original}:failure:${failures}`,
        expect: { streamName: stream },
        headers: retryHeaders(m.headers, { failures, error, notBefore: Date.now() + delay, original }),
      });
      m.ack();
    } catch (publishErr) {
      this.logger.error({ err: publishErr, stream, seq: m.seq }, 'could not count a job failure; the job is retried');
      m.nak(delay);
    }
  }

  /** The handler found `m` impossible to handle as it is: dead-lettered at once with that reason. */
  async deadLetter(spec: StreamSpec, stream: string, m: JsMsg, reason: string): Promise<void> {
    await this.bury(spec, stream, m, reason, JobFailures.failuresOf(m) + 1);
  }

  /** Moves `m` to the dead-letter stream and acks it; when the dead letter cannot be stored, retries `m` later. */
  private async bury(spec: StreamSpec, stream: string, m: JsMsg, error: string, failures: number): Promise<void> {
    const msgId = JobFailures.originalMsgId(m, stream);
    try {
      await this.deadLetters.put(m, stream, msgId, { error, failures });
    } catch (err) {
      this.logger.error({ err, stream, seq: m.seq, msgId }, 'could not dead-letter a job; it is retried');
      m.nak(this.backoff(failures));
      return;
    }
    m.ack();
    this.onDeadLetter(spec);
    this.logger.error(
      { stream, seq: m.seq, msgId, failures, error: oneLine(error) },
      'job dead-lettered (npm run admin -- jobs dead)',
    );
  }

  private backoff(failures: number): number {
    return doublingDelayMs(failures, { firstMs: this.settings.failureBackoffMs, maxMs: MAX_FAILURE_BACKOFF_MS });
  }
}

/**
 * Rolling upgrades: a message of another major than the stream's is refused (poison, with the reason);
 * any minor of it is read, its unknown fields stripped by the schema. The version field is taken out
 * of the body: handlers see the payload only.
 */
function takeVersion(spec: StreamSpec, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  const problem = versionProblem(body[MESSAGE_VERSION_FIELD], streamVersion(spec));
  delete body[MESSAGE_VERSION_FIELD];
  return problem;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}`;
  return String(err);
}

/** The original's headers (its trace context) without JetStream's own, plus the failure count. */
function retryHeaders(
  from: MsgHdrs | undefined,
  retry: { failures: number; error: string; notBefore: number; original: string },
): MsgHdrs {
  const h = natsHeaders();
  const ours = new Set<string>(Object.values(JobFailureHeaders).map((k) => k.toLowerCase()));
  for (const key of from?.keys() ?? []) {
    const lower = key.toLowerCase();
    if (lower.startsWith('nats-') || ours.has(lower)) continue;
    for (const value of from!.values(key)) h.append(key, value);
  }
  h.set(JobFailureHeaders.failures, String(retry.failures));
  h.set(JobFailureHeaders.lastError, oneLine(retry.error));
  h.set(JobFailureHeaders.notBefore, String(retry.notBefore));
  h.set(JobFailureHeaders.msgId, retry.original);
  return h;
}
