import {
  headers as natsHeaders,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type MsgRequest,
  type NatsConnection,
  type StoredMsg,
} from 'nats';
import {
  DeadLetterHeaders,
  DeadLetterStream,
  jobStreamNamed,
  MAX_DEAD_LETTER_ERROR,
  redriveMsgId,
  type DeadLetterView,
  type RedriveResult,
} from '@payments/contracts';
import { countWork } from '@payments/metrics';

/** Why a message was given up on: its last error and how many failures were counted. */
export interface DeathCause {
  error: string;
  failures: number;
}

/** The dead letter an operator asked for is not in the stream (re-driven already, or never there). */
export class DeadLetterNotFoundError extends Error {
  override readonly name = 'DeadLetterNotFoundError';

  constructor(readonly id: number) {
    super(`no dead letter ${id} (listed by: npm run admin -- jobs dead)`);
  }
}

/**
 * A dead letter whose headers name no job stream of the bus registry (JobStreams), or a subject other
 * than that stream's, or another prefix's stream: it is not re-driven, and nothing is published.
 * A dead letter's headers are only what its publisher wrote; anyone who may publish to the
 * dead-letter subject could otherwise make a re-drive publish anywhere (another tenant's job subject).
 */
export class DeadLetterRedriveRefusedError extends Error {
  override readonly name = 'DeadLetterRedriveRefusedError';

  constructor(
    readonly id: number,
    /** The stream its headers name. */
    readonly stream: string,
    /** The subject its headers name. */
    readonly subject: string,
  ) {
    super(
      `dead letter ${id} is not re-driven: its stream ${JSON.stringify(stream)} and subject ` +
        `${JSON.stringify(subject)} are not a job stream of this bus and its subject`,
    );
  }
}

/** Error text fit for a header: one line, at most MAX_DEAD_LETTER_ERROR characters. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > MAX_DEAD_LETTER_ERROR ? `${flat.slice(0, MAX_DEAD_LETTER_ERROR - 1)}…` : flat || '(no message)';
}

const isNotFound = (err: unknown) => /not found|no message/i.test((err as Error)?.message ?? '');

/**
 * The dead-letter stream of one bus prefix, `<prefix>_dead_letters`: the consumers put poison and
 * repeatedly failing job messages here; the admin CLI lists and re-drives them. The provisioner
 * creates it (topology-config.ts: limits retention, discard new, so a full stream refuses a dead
 * letter and the message it would hold stays where it was, retried); a consumer's service checks at
 * start that it is there.
 */
export class DeadLetterBox {
  constructor(
    private readonly nc: NatsConnection,
    private readonly js: () => JetStreamClient,
    private readonly prefix: string,
  ) {}

  get streamName(): string {
    return `${this.prefix}_${DeadLetterStream.name}`;
  }

  get subject(): string {
    return `${this.prefix}.${DeadLetterStream.subject}`;
  }

  /**
   * Stores `m` (taken from `stream`) as a dead letter; resolves once the stream has it. Its id is the
   * source message's place (`<stream>:<seq>`), so storing it again after a crash is dropped.
   */
  async put(m: JsMsg, stream: string, originalMsgId: string, cause: DeathCause): Promise<void> {
    const h = natsHeaders();
    h.set(DeadLetterHeaders.stream, stream);
    h.set(DeadLetterHeaders.subject, m.subject);
    h.set(DeadLetterHeaders.msgId, originalMsgId);
    h.set(DeadLetterHeaders.error, oneLine(cause.error));
    h.set(DeadLetterHeaders.failures, String(cause.failures));
    h.set(DeadLetterHeaders.at, new Date().toISOString());
    countWork('busPublishes');
    await this.js().publish(this.subject, m.data, {
      msgID: `${stream}:${m.seq}`,
      expect: { streamName: this.streamName },
      headers: h,
    });
  }

  /**
   * The dead letters, oldest first, at most `limit`, after id `after` (a page's last id: the next page);
   * none when the stream was never created.
   */
  async list(limit = 1_000, after = 0): Promise<DeadLetterView[]> {
    const jsm = await this.nc.jetstreamManager();
    const info = await jsm.streams.info(this.streamName).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (!info || info.state.messages === 0) return [];
    const views: DeadLetterView[] = [];
    let seq = Math.max(info.state.first_seq, after + 1);
    while (views.length < limit && seq <= info.state.last_seq) {
      const stored = await this.next(jsm, seq);
      if (!stored) break;
      views.push(viewOf(stored));
      seq = stored.seq + 1;
    }
    return views;
  }

  /** The first dead letter at or after `seq` (deleted ones leave gaps), if any. */
  private next(jsm: JetStreamManager, seq: number): Promise<StoredMsg | undefined> {
    // NextMsgRequest: nats.js 2.x's MsgRequest type lacks it; the server (2.9+) takes it.
    const request = { seq, next_by_subj: this.subject } as unknown as MsgRequest;
    return jsm.streams.getMessage(this.streamName, request).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  }

  /** One dead letter by id, or DeadLetterNotFoundError. */
  async get(id: number): Promise<{ view: DeadLetterView; data: Uint8Array }> {
    const jsm = await this.nc.jetstreamManager();
    const stored = await jsm.streams.getMessage(this.streamName, { seq: id }).catch((err: unknown) => {
      if (isNotFound(err)) throw new DeadLetterNotFoundError(id);
      throw err;
    });
    return { view: viewOf(stored), data: stored.data };
  }

  /**
   * Publishes dead letter `id` again to the job stream it came from, as its producer did (that
   * stream's subject, same bytes; redriveTarget refuses any other), with a Nats-Msg-Id derived from the original and `id`, then removes it from the
   * dead-letter stream. A crash in between leaves it listed; re-driving it again is then dropped as
   * a duplicate within the stream's window. The failure count starts again from 0.
   */
  async redrive(id: number): Promise<RedriveResult> {
    const { view, data } = await this.get(id);
    const target = this.redriveTarget(view);
    const msgId = redriveMsgId(view.msg_id, id);
    countWork('busPublishes');
    const ack = await this.js().publish(target.subject, data, { msgID: msgId, expect: { streamName: target.stream } });
    const jsm = await this.nc.jetstreamManager();
    await jsm.streams.deleteMessage(this.streamName, id, false).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    return { id, stream: target.stream, msg_id: msgId, duplicate: ack.duplicate };
  }

  /**
   * Removes dead letter `id` without publishing it (an operator judged it not worth redoing), or
   * DeadLetterNotFoundError when it is not there (discarded or re-driven already).
   */
  async discard(id: number): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const deleted = await jsm.streams.deleteMessage(this.streamName, id, false).catch((err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    });
    if (!deleted) throw new DeadLetterNotFoundError(id);
  }

  /**
   * Where dead letter `view` may be re-driven: the job stream the registry (jobStreamNamed) names for
   * its stream header, on this prefix, and that stream's own subject. The headers are only checked
   * against it, never followed: any other stream, subject or prefix is DeadLetterRedriveRefusedError.
   */
  private redriveTarget(view: DeadLetterView): { stream: string; subject: string } {
    const ownStreams = `${this.prefix}_`;
    const name = view.stream.startsWith(ownStreams) ? view.stream.slice(ownStreams.length) : undefined;
    const spec = name === undefined ? undefined : jobStreamNamed(name);
    const target = spec && { stream: `${this.prefix}_${spec.name}`, subject: `${this.prefix}.${spec.subject}` };
    if (!target || target.stream !== view.stream || target.subject !== view.subject)
      throw new DeadLetterRedriveRefusedError(view.id, view.stream, view.subject);
    return target;
  }
}

function viewOf(m: StoredMsg): DeadLetterView {
  const h = m.header;
  const failures = Number(h.get(DeadLetterHeaders.failures));
  return {
    id: m.seq,
    stream: h.get(DeadLetterHeaders.stream),
    subject: h.get(DeadLetterHeaders.subject),
    msg_id: h.get(DeadLetterHeaders.msgId),
    error: h.get(DeadLetterHeaders.error),
    failures: Number.isFinite(failures) ? failures : 0,
    dead_lettered_at: h.get(DeadLetterHeaders.at) || m.time.toISOString(),
    bytes: m.data.length,
  };
}
