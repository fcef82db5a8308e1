import type { Kysely } from 'kysely';
import { connectBus, DeadLetterNotFoundError, DeadLetterRedriveRefusedError, type Bus } from '@payments/bus';
import { busCredentialChecks, requireProductionSecrets, type CommonConfig } from '@payments/config';
import {
  DEAD_LETTER_PAYLOAD_MAX_BYTES,
  type AdminDeadLetterDetail,
  type DeadLetterView,
  type RedriveResult,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import type { GatewayDatabase } from '../../db/schema';
import { recordAdminAction, type AuditedBy } from '../../domain/tenancy/admin-audit';
import { AdminError, AdminNotFoundError } from '../../domain/tenancy/admin-error';

/**
 * The admin CLI's `jobs` commands: the dead letters of the bus, listed and re-driven.
 * The CLI logs in to NATS as its config says (NATS_URL, BUS_PREFIX, NATS_USER/NATS_PASSWORD or
 * NATS_CREDS; in production the `admin-cli` user of deploy/nats, which may do only this).
 */
export async function openAdminBus(config: CommonConfig): Promise<Bus> {
  // In production its login is checked as a service's is: present, and no development default.
  requireProductionSecrets(config.nodeEnv, busCredentialChecks(config));
  return connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'admin-cli',
    credentials: config,
    streamSettings: config,
    logger: createLogger('admin-cli', 'silent'),
    timeoutMs: config.busTimeoutMs,
  });
}

/** The dead letters, oldest first, at most `limit`, after id `after` (the previous page's last). */
export function listDeadLetters(bus: Bus, limit?: number, after?: number): Promise<DeadLetterView[]> {
  return bus.streams.deadLetters.list(limit, after);
}

/**
 * A page of the dead letters: one more than asked is read to tell whether another page follows;
 * `next` is this page's last id, the cursor of the next one.
 */
export async function pageDeadLetters(
  bus: Bus,
  page: { after?: number; limit: number },
): Promise<{ items: DeadLetterView[]; next?: number }> {
  const rows = await listDeadLetters(bus, page.limit + 1, page.after);
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > page.limit && last ? last.id : undefined };
}

/**
 * One dead letter with its body, for an operator to judge: UTF-8 text (JSON re-indented) or base64,
 * cut at DEAD_LETTER_PAYLOAD_MAX_BYTES so a huge poison message does not become a huge page.
 */
export async function showDeadLetter(bus: Bus, id: number): Promise<AdminDeadLetterDetail> {
  const { view, data } = await bus.streams.deadLetters.get(id).catch((err: unknown) => {
    if (err instanceof DeadLetterNotFoundError) throw new AdminNotFoundError(err.message);
    throw err;
  });
  const truncated = data.length > DEAD_LETTER_PAYLOAD_MAX_BYTES;
  const bytes = Buffer.from(data.subarray(0, DEAD_LETTER_PAYLOAD_MAX_BYTES));
  const text = utf8(bytes, truncated);
  return {
    dead_letter: view,
    payload_encoding: text === undefined ? 'base64' : 'utf8',
    payload: text === undefined ? bytes.toString('base64') : truncated ? text : indented(text),
    payload_truncated: truncated,
  };
}

/** The bytes as text when they are UTF-8 (a cut may split the last character: that tail is dropped). */
function utf8(bytes: Buffer, cut: boolean): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: cut });
  } catch {
    return undefined;
  }
}

function indented(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Removes dead letter `id` without publishing it, audited as jobs.discard: the audit row's
 * transaction commits only once the removal is done, as a re-drive's does.
 */
export async function discardDeadLetter(
  db: Kysely<GatewayDatabase>,
  bus: Bus,
  id: number,
  by: AuditedBy,
): Promise<{ id: number; discarded: true }> {
  const { view } = await bus.streams.deadLetters.get(id).catch((err: unknown) => {
    if (err instanceof DeadLetterNotFoundError) throw new AdminNotFoundError(err.message);
    throw err;
  });
  await db.transaction().execute(async (trx) => {
    await recordAdminAction(trx, by, 'jobs.discard', null, {
      dead_letter_id: id,
      stream: view.stream,
      subject: view.subject,
      msg_id: view.msg_id,
      failures: view.failures,
    });
    await bus.streams.deadLetters.discard(id).catch((err: unknown) => {
      if (err instanceof DeadLetterNotFoundError) throw new AdminNotFoundError(err.message);
      throw err;
    });
  });
  return { id, discarded: true };
}

/** `jobs redrive|discard <id>`: the id is a dead letter's sequence number, as `jobs dead` lists it. */
export function deadLetterId(target: string | undefined, command: 'redrive' | 'discard' = 'redrive'): number {
  if (target === undefined || !/^[1-9]\d{0,15}$/.test(target))
    throw new AdminError(`jobs ${command} needs the id of a dead letter, as \`npm run admin -- jobs dead\` lists it`);
  return Number(target);
}

/**
 * A dead letter that names a stream or subject other than a job stream of the bus registry and its
 * subject: not re-driven (nothing was published), and the refusal audited. Its headers are only what
 * its publisher wrote, so the operator is told what it named, to look into who put it there.
 */
export class RedriveRefusedError extends AdminError {
  constructor(
    readonly id: number,
    readonly stream: string,
    readonly subject: string,
  ) {
    super(
      `dead letter ${id} was not re-driven: it names stream ${JSON.stringify(stream)} and subject ` +
        `${JSON.stringify(subject)}, which are not a job stream of this bus and its subject. ` +
        'It stays listed (npm run admin -- jobs dead); the refusal is in the audit.',
    );
  }
}

/**
 * Publishes dead letter `id` again to its stream and removes it from the dead letters, audited: the
 * audit row is written in a transaction committed only once the re-drive is done, so a failed
 * re-drive leaves no audit and a done one is never unaudited (short of the commit itself failing).
 * A dead letter naming anything but a job stream and its subject is refused (RedriveRefusedError),
 * and that refusal is audited on its own, since a forged dead letter is someone's attempt to have a
 * job published where they may not publish.
 */
export async function redriveDeadLetter(
  db: Kysely<GatewayDatabase>,
  bus: Bus,
  id: number,
  by: AuditedBy,
): Promise<RedriveResult> {
  const { view } = await bus.streams.deadLetters.get(id).catch((err: unknown) => {
    if (err instanceof DeadLetterNotFoundError) throw new AdminNotFoundError(err.message);
    throw err;
  });
  try {
    return await db.transaction().execute(async (trx) => {
      await recordAdminAction(trx, by, 'jobs.redrive', null, {
        dead_letter_id: id,
        stream: view.stream,
        msg_id: view.msg_id,
        failures: view.failures,
      });
      return bus.streams.deadLetters.redrive(id).catch((err: unknown) => {
        if (err instanceof DeadLetterNotFoundError) throw new AdminNotFoundError(err.message);
        throw err;
      });
    });
  } catch (err) {
    if (!(err instanceof DeadLetterRedriveRefusedError)) throw err;
    await recordAdminAction(db, by, 'jobs.redrive-refused', null, {
      dead_letter_id: err.id,
      stream: err.stream,
      subject: err.subject,
      msg_id: view.msg_id,
    });
    throw new RedriveRefusedError(err.id, err.stream, err.subject);
  }
}

/** One dead letter per line, for a person. */
export function describeDeadLetter(d: DeadLetterView): string {
  return `${d.id}  ${d.dead_lettered_at}  ${d.stream}  ${d.msg_id}  failures=${d.failures}  ${d.error}`;
}
