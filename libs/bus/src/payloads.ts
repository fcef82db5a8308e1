import { headers as natsHeaders, JSONCodec, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import {
  claimStoreName,
  claimStoreRecipients,
  formatVersion,
  MESSAGE_VERSION_HEADER,
  REQUEST_REPLY_VERSION,
  RequestServers,
  ServiceError,
  versionProblem,
  type BusService,
  type RequestSubject,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { countWork } from '@payments/metrics';
import { CLAIM_DIGEST_HEADER, CLAIM_HEADER, ClaimReader, ClaimRefusedError, ClaimWriter } from './claim-check';
import { inboxPrefixOf } from './inbox';

/**
 * Whose claim store a large body goes to: the server of each request subject (relative), the
 * services that have a store (a reply goes to its asker's, named by the reply inbox `_INBOX_<name>`),
 * and a store's name. The system's is SystemClaimRouting; the bus lib's tests bring their own.
 */
export interface ClaimRouting<S extends string = RequestSubject, N extends string = BusService> {
  readonly servers: { readonly [K in S]: N };
  readonly recipients: readonly N[];
  storeName(prefix: string, recipient: N): string;
}

/** The system's routing, from the bus topology in libs/contracts. */
export const SystemClaimRouting: ClaimRouting = {
  servers: RequestServers,
  recipients: claimStoreRecipients(),
  storeName: claimStoreName,
};

/** Where a body is sent: a request on a relative subject, or a reply to an inbox. */
export type Destination = { request: string } | { replyTo: string };

/** Request and reply bodies as they travel: JSON, or a claim check when too large for a NATS message. */
export interface PayloadCodec {
  encode(value: unknown, to: Destination): Promise<{ data: Uint8Array; headers: MsgHdrs }>;
  decode(msg: Msg): Promise<unknown>;
}

/** A large body addressed to no service with a claim store: it cannot be sent. */
export class ClaimRecipientUnknownError extends ServiceError {
  constructor(to: Destination, size: number) {
    const whom = 'request' in to ? `a request on ${to.request}` : `a reply to ${to.replyTo.split('.')[0]}`;
    super(
      'internal_error',
      `${whom} is too large for a NATS message (${size} bytes) and names no service with a claim store`,
    );
  }
}

/** What the codec is made with. */
export interface PayloadSettings<S extends string, N extends string> {
  prefix: string;
  /** This service's name (BusOptions.name): it reads claim-checked bodies from its own store only. */
  self: string;
  /** Bodies larger than this go by claim check; default: the server's max_payload minus 64 KiB. */
  threshold?: number;
  routing: ClaimRouting<S, N>;
  log: Logger;
}

const json = JSONCodec<unknown>();
const VERSION = formatVersion(REQUEST_REPLY_VERSION);

/**
 * JSON on the wire, its version (REQUEST_REPLY_VERSION) in a header; a body of a major this side does
 * not know is not read: decode throws a 503 naming the versions (the request or reply was sent by an
 * instance of another major, during a rolling upgrade). A body larger than the threshold goes into
 * its recipient's claim store (claim-check.ts), and the message carries the object's name and digest.
 */
export function payloadCodec<S extends string, N extends string>(
  connection: NatsConnection,
  settings: PayloadSettings<S, N>,
): PayloadCodec {
  const stores = claimStores(settings);
  const writer = new ClaimWriter(connection);
  const own = stores.own();
  const reader = own === undefined ? undefined : new ClaimReader(connection, own);
  const limit = settings.threshold ?? Math.max(1024, (connection.info?.max_payload ?? 1024 * 1024) - 64 * 1024);
  return {
    async encode(value, to) {
      const data = json.encode(value);
      const headers = natsHeaders();
      headers.set(MESSAGE_VERSION_HEADER, VERSION);
      if (data.length <= limit) return { data, headers };
      const store = stores.of(to);
      if (store === undefined) throw new ClaimRecipientUnknownError(to, data.length);
      const ticket = await writer.put(store, data);
      headers.set(CLAIM_HEADER, ticket.name);
      headers.set(CLAIM_DIGEST_HEADER, ticket.digest);
      return { data: new Uint8Array(0), headers };
    },
    async decode(msg) {
      const problem = versionProblem(msg.headers?.get(MESSAGE_VERSION_HEADER), REQUEST_REPLY_VERSION);
      if (problem) throw new ServiceError('service_unavailable', problem);
      const name = msg.headers?.get(CLAIM_HEADER);
      if (!name) return json.decode(msg.data);
      const digest = msg.headers?.get(CLAIM_DIGEST_HEADER);
      const data = await take(reader, settings.self, { name, digest }).catch((err: unknown) => {
        if (err instanceof ClaimRefusedError) refusedClaim(settings.log, err, msg.subject);
        throw err;
      });
      return json.decode(data);
    },
  };
}

/** Reads a claim-checked body from this service's store; a service with none is never sent one. */
async function take(
  reader: ClaimReader | undefined,
  self: string,
  ticket: { name: string; digest?: string },
): Promise<Uint8Array> {
  if (!reader) throw new ClaimRefusedError(`(${self} has no claim store)`, ticket.name, 'missing');
  return reader.take(ticket);
}

/** A refused body is a poison message: logged, counted (bus_claims_refused_total), never read. */
function refusedClaim(log: Logger, err: ClaimRefusedError, subject: string): void {
  countWork('busClaimsRefused');
  log.error(
    { store: err.store, object: err.object, reason: err.reason, subject },
    'claim-checked body refused: its object is missing or does not match the digest its message carries',
  );
}

/** The claim stores of this routing: a destination's, and this service's own (undefined: none). */
function claimStores<S extends string, N extends string>(settings: PayloadSettings<S, N>) {
  const { routing, prefix, self } = settings;
  const servers = new Map<string, N>(Object.entries<N>(routing.servers));
  const recipient = (name: string | undefined) => routing.recipients.find((r) => r === name);
  const store = (name: N | undefined) => (name === undefined ? undefined : routing.storeName(prefix, name));
  return {
    of(to: Destination): string | undefined {
      if ('request' in to) return store(recipient(servers.get(to.request)));
      // The asker's name is its inbox's prefix (inboxPrefixOf): `_INBOX_<name>.<token>`.
      return store(routing.recipients.find((r) => to.replyTo.startsWith(`${inboxPrefixOf(r)}.`)));
    },
    own: () => store(recipient(self)),
  };
}
