import { DeadLetterStream } from './dead-letters';
import type { RequestSubject } from './bus-registry';
import { Streams, type StreamSpec } from './streams';
import { QueueGroups, Subjects } from './subjects';

/**
 * Who owns what on the bus: the one table the provisioner (`npm run admin -- bus provision`), the
 * services' start-up checks, the claim checks and the NATS server config's tests read. A service's
 * bus user is its name here, and so are its reply inboxes (`_INBOX_<name>`).
 */
export type BusService = (typeof QueueGroups)[keyof typeof QueueGroups];

/** Every service's bus user, in a fixed order. */
export const BusServices: readonly BusService[] = Object.values(QueueGroups);

/** The bus user of the admin CLI's jobs commands: lists, removes and re-drives dead letters. */
export const ADMIN_CLI_BUS_USER = 'admin-cli';

/** Which service answers each request subject (its queue group). */
export const RequestServers: { readonly [S in RequestSubject]: BusService } = {
  [Subjects.clients.create]: QueueGroups.clients,
  [Subjects.clients.update]: QueueGroups.clients,
  [Subjects.clients.lookup]: QueueGroups.clients,
  [Subjects.receivables.create]: QueueGroups.receivables,
  [Subjects.receivables.cancel]: QueueGroups.receivables,
  [Subjects.receivables.search]: QueueGroups.receivables,
  [Subjects.receivables.consult]: QueueGroups.receivables,
  [Subjects.receivables.installments]: QueueGroups.receivables,
  [Subjects.receivables.slipPdf]: QueueGroups.receivables,
  [Subjects.receivables.slipQrCode]: QueueGroups.receivables,
  [Subjects.receivables.history]: QueueGroups.receivables,
  [Subjects.receivables.paymentData]: QueueGroups.receivables,
  [Subjects.receivables.detail]: QueueGroups.receivables,
  [Subjects.receivables.registrationStats]: QueueGroups.receivables,
  [Subjects.receivables.registrationHealth]: QueueGroups.receivables,
  [Subjects.booklets.request]: QueueGroups.booklets,
  [Subjects.booklets.download]: QueueGroups.booklets,
  [Subjects.tenants.signingSecret]: QueueGroups.gateway,
  [Subjects.tenants.profile]: QueueGroups.gateway,
  [Subjects.tenants.providerCredentials]: QueueGroups.gateway,
  [Subjects.callbacks.list]: QueueGroups.callbacks,
  [Subjects.callbacks.get]: QueueGroups.callbacks,
  [Subjects.callbacks.retry]: QueueGroups.callbacks,
  [Subjects.callbacks.replay]: QueueGroups.callbacks,
  [Subjects.callbacks.deliveryStats]: QueueGroups.callbacks,
  [Subjects.callbacks.deliveryHealth]: QueueGroups.callbacks,
};

const GATEWAY_ONLY = [QueueGroups.gateway] as const;

/**
 * Which services may ask on each request subject: the gateway asks on behalf of the HTTP API, and a
 * few services ask one another. Only these may publish the subject.
 */
export const RequestAskers: { readonly [S in RequestSubject]: readonly BusService[] } = {
  [Subjects.clients.create]: GATEWAY_ONLY,
  [Subjects.clients.update]: GATEWAY_ONLY,
  [Subjects.clients.lookup]: [QueueGroups.receivables],
  [Subjects.receivables.create]: GATEWAY_ONLY,
  [Subjects.receivables.cancel]: GATEWAY_ONLY,
  [Subjects.receivables.search]: GATEWAY_ONLY,
  [Subjects.receivables.consult]: GATEWAY_ONLY,
  [Subjects.receivables.installments]: [QueueGroups.booklets],
  [Subjects.receivables.slipPdf]: GATEWAY_ONLY,
  [Subjects.receivables.slipQrCode]: GATEWAY_ONLY,
  [Subjects.receivables.history]: GATEWAY_ONLY,
  [Subjects.receivables.paymentData]: GATEWAY_ONLY,
  [Subjects.receivables.detail]: GATEWAY_ONLY,
  [Subjects.receivables.registrationStats]: GATEWAY_ONLY,
  [Subjects.receivables.registrationHealth]: GATEWAY_ONLY,
  [Subjects.booklets.request]: GATEWAY_ONLY,
  [Subjects.booklets.download]: GATEWAY_ONLY,
  [Subjects.tenants.signingSecret]: [QueueGroups.callbacks],
  [Subjects.tenants.profile]: [QueueGroups.booklets],
  [Subjects.tenants.providerCredentials]: [QueueGroups.receivables],
  [Subjects.callbacks.list]: GATEWAY_ONLY,
  [Subjects.callbacks.get]: GATEWAY_ONLY,
  [Subjects.callbacks.retry]: GATEWAY_ONLY,
  [Subjects.callbacks.replay]: GATEWAY_ONLY,
  [Subjects.callbacks.deliveryStats]: GATEWAY_ONLY,
  [Subjects.callbacks.deliveryHealth]: GATEWAY_ONLY,
};

/** A job stream's parties: who publishes its messages (through an outbox) and which service works them off. */
export interface StreamParties {
  stream: StreamSpec;
  producers: readonly BusService[];
  consumer: BusService;
}

/** Every job stream with its parties. A re-drive (gateway's admin API, admin CLI) publishes too, only to these subjects. */
export const JobStreams: readonly StreamParties[] = [
  {
    stream: Streams.callbackRequests,
    producers: [QueueGroups.receivables, QueueGroups.booklets],
    consumer: QueueGroups.callbacks,
  },
  { stream: Streams.receivableRegistrations, producers: [QueueGroups.receivables], consumer: QueueGroups.receivables },
  { stream: Streams.receivableCancellations, producers: [QueueGroups.receivables], consumer: QueueGroups.receivables },
  { stream: Streams.bookletBuilds, producers: [QueueGroups.booklets], consumer: QueueGroups.booklets },
];

/**
 * The job stream a dead letter of stream `name` (a StreamSpec's name, without the prefix) may be
 * re-driven to; undefined for any other name, which is never re-driven.
 */
export function jobStreamNamed(name: string): StreamSpec | undefined {
  return JobStreams.find((parties) => parties.stream.name === name)?.stream;
}

/** The services that dead-letter messages (every job stream's consumer): they may publish to the dead letters. */
export const DeadLetterProducers: readonly BusService[] = [...new Set(JobStreams.map((p) => p.consumer))];

/** Who reads, removes and re-drives dead letters: the gateway's admin API and the admin CLI. */
export const DeadLetterReaders = [QueueGroups.gateway, ADMIN_CLI_BUS_USER] as const;

export { DeadLetterStream };

/**
 * Claim checks: a body too large for a NATS message is put in the object store of the service it is
 * addressed to (a request's server, a reply's asker): `<prefix>_claims_<service>`. Only that service
 * reads its store; only the services that send it bodies (its askers, and the servers it asks) write
 * to it. The message carries the object's name and the body's SHA-256 digest.
 */
export function claimStoreName(prefix: string, recipient: BusService): string {
  return `${prefix}_claims_${recipient}`;
}

/** The services that may put bodies in `recipient`'s claim store. */
export function claimStoreWriters(recipient: BusService): BusService[] {
  const writers = new Set<BusService>();
  for (const subject of Object.keys(RequestServers) as RequestSubject[]) {
    const server = RequestServers[subject];
    const askers = RequestAskers[subject];
    // Requests to the recipient come from its askers; replies to it, from the servers it asks.
    if (server === recipient) askers.forEach((asker) => writers.add(asker));
    if (askers.includes(recipient)) writers.add(server);
  }
  writers.delete(recipient);
  return [...writers].sort();
}

/** The services whose claim stores exist: those that are sent bodies at all (asked, or asking). */
export function claimStoreRecipients(): BusService[] {
  return BusServices.filter((service) => claimStoreWriters(service).length > 0);
}
