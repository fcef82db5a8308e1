/**
 * Versions of bus messages, for rolling upgrades: an instance of version N and one of N-1
 * share the streams and the request-reply subjects, so each reads what the other writes.
 *
 * The rules: within a major, a message changes only by adding optional fields (a reader of an older
 * minor strips what it does not know, docs/architecture.md "Rolling upgrades"; a reader of a newer
 * minor finds the field missing and takes its default). A change that an older reader would misread
 * is a new major; a reader refuses a major it does not know (a job message is dead-lettered with the
 * reason, a request is answered with an error) rather than guess. A message without a version is 1.0:
 * producers wrote none before versions were introduced.
 */
export interface MessageVersion {
  major: number;
  minor: number;
}

/**
 * Where the version travels. On a stream message it is a field of the JSON body, written by whoever
 * makes the message (the outbox keeps it with the row, so a row written by N-1 and published by N
 * keeps N-1's version); on a request or reply, a header.
 */
export const MESSAGE_VERSION_FIELD = 'v';
export const MESSAGE_VERSION_HEADER = 'Payments-Message-Version';

/** What a message without a version is. */
export const UNVERSIONED: MessageVersion = { major: 1, minor: 0 };

/** The version of requests and replies on every request-reply subject (none has changed since 1.0). */
export const REQUEST_REPLY_VERSION: MessageVersion = { major: 1, minor: 0 };

/** `1.2`, as it travels. */
export function formatVersion(version: MessageVersion): string {
  return `${version.major}.${version.minor}`;
}

/** A version as it travels (`1.2`, or `2` for 2.0); undefined when it is none (absent: 1.0, see UNVERSIONED). */
export function parseVersion(text: unknown): MessageVersion | undefined {
  if (text === undefined || text === null || text === '') return UNVERSIONED;
  const match = /^(\d{1,6})(?:\.(\d{1,6}))?$/.exec(String(text));
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2] ?? 0) };
}

/**
 * Why a reader that knows `known` cannot read a message of version `found` (as it travels), or
 * undefined when it can: any minor of its own major.
 */
export function versionProblem(found: unknown, known: MessageVersion): string | undefined {
  const version = parseVersion(found);
  if (!version) return `unreadable message version ${JSON.stringify(found)}`;
  if (version.major === known.major) return undefined;
  return `unsupported message version ${formatVersion(version)}: this reader knows major ${known.major} (${formatVersion(known)})`;
}
