import type { BookletDownloadCommand, BookletDownloadReply, BookletRequestCommand, BookletResponse } from './booklet';
import type { InstallmentsCommand, InstallmentsReply, TenantProfileCommand, TenantProfileReply } from './booklet';
import type {
  CallbackEventView,
  CallbackGetCommand,
  CallbackListCommand,
  CallbackListReply,
  CallbackReplayCommand,
  CallbackReplayResponse,
  CallbackRequestBatch,
  CallbackRetryCommand,
  CallbackRetryResponse,
  SigningSecretCommand,
  SigningSecretReply,
} from './callbacks';
import type { RegistrationHealthCommand, RegistrationHealthReply } from './registration-health';
import type {
  DeliveryHealthCommand,
  DeliveryHealthReply,
  DeliveryStatsCommand,
  DeliveryStatsReply,
} from './delivery-stats';
import type {
  ClientsCreateCommand,
  ClientsCreateResponse,
  ClientsLookupCommand,
  ClientsLookupReply,
  ClientUpdateCommand,
  ClientUpdateResponse,
} from './clients';
import type {
  CancelResponse,
  ReceivableCancelCommand,
  ReceivableConsultCommand,
  ReceivableConsultReply,
  ReceivableDetailCommand,
  ReceivableDetailReply,
  ReceivablePaymentDataCommand,
  ReceivablePaymentDataReply,
  ReceivablesCreateCommand,
  ReceivablesCreateResponse,
  ReceivablesSearchCommand,
  ReceivablesSearchReply,
  SlipPdfCommand,
  SlipPdfReply,
  SlipQrCodeCommand,
  SlipQrCodeReply,
} from './receivables';
import type { ProviderCredentialsCommand, ProviderCredentialsReply } from './provider-accounts';
import type { ReceivableHistory, ReceivableHistoryCommand } from './receivable-history';
import type { RegistrationStats, RegistrationStatsCommand } from './stats';
import { Streams, type BookletJob, type CancellationJob, type RegistrationJob, type StreamSpec } from './streams';
import { Subjects } from './subjects';

/** One request-reply exchange: what the request carries, and the data of a success reply. */
export interface Exchange<Request, Reply> {
  request: Request;
  reply: Reply;
}

/**
 * Every request-reply subject (Subjects) with its request and reply types: `bus.request(subject, payload)`
 * and `bus.serve(subject, handler)` take their types from here, so asker and server cannot disagree.
 * On the wire the reply's data travels in a BusReply envelope.
 */
export type RequestReplyRegistry = {
  [Subjects.clients.create]: Exchange<ClientsCreateCommand, ClientsCreateResponse>;
  [Subjects.clients.update]: Exchange<ClientUpdateCommand, ClientUpdateResponse>;
  [Subjects.clients.lookup]: Exchange<ClientsLookupCommand, ClientsLookupReply>;
  [Subjects.receivables.create]: Exchange<ReceivablesCreateCommand, ReceivablesCreateResponse>;
  [Subjects.receivables.cancel]: Exchange<ReceivableCancelCommand, CancelResponse>;
  [Subjects.receivables.search]: Exchange<ReceivablesSearchCommand, ReceivablesSearchReply>;
  [Subjects.receivables.consult]: Exchange<ReceivableConsultCommand, ReceivableConsultReply>;
  [Subjects.receivables.installments]: Exchange<InstallmentsCommand, InstallmentsReply>;
  [Subjects.receivables.slipPdf]: Exchange<SlipPdfCommand, SlipPdfReply>;
  [Subjects.receivables.slipQrCode]: Exchange<SlipQrCodeCommand, SlipQrCodeReply>;
  [Subjects.receivables.history]: Exchange<ReceivableHistoryCommand, ReceivableHistory>;
  [Subjects.receivables.paymentData]: Exchange<ReceivablePaymentDataCommand, ReceivablePaymentDataReply>;
  [Subjects.receivables.detail]: Exchange<ReceivableDetailCommand, ReceivableDetailReply>;
  [Subjects.receivables.registrationStats]: Exchange<RegistrationStatsCommand, RegistrationStats>;
  [Subjects.receivables.registrationHealth]: Exchange<RegistrationHealthCommand, RegistrationHealthReply>;
  [Subjects.booklets.request]: Exchange<BookletRequestCommand, BookletResponse>;
  [Subjects.booklets.download]: Exchange<BookletDownloadCommand, BookletDownloadReply>;
  [Subjects.tenants.signingSecret]: Exchange<SigningSecretCommand, SigningSecretReply>;
  [Subjects.tenants.profile]: Exchange<TenantProfileCommand, TenantProfileReply>;
  [Subjects.tenants.providerCredentials]: Exchange<ProviderCredentialsCommand, ProviderCredentialsReply>;
  [Subjects.callbacks.list]: Exchange<CallbackListCommand, CallbackListReply>;
  [Subjects.callbacks.get]: Exchange<CallbackGetCommand, CallbackEventView>;
  [Subjects.callbacks.retry]: Exchange<CallbackRetryCommand, CallbackRetryResponse>;
  [Subjects.callbacks.replay]: Exchange<CallbackReplayCommand, CallbackReplayResponse>;
  [Subjects.callbacks.deliveryStats]: Exchange<DeliveryStatsCommand, DeliveryStatsReply>;
  [Subjects.callbacks.deliveryHealth]: Exchange<DeliveryHealthCommand, DeliveryHealthReply>;
};

/**
 * Every JetStream stream's subject (Streams) with the message its producers publish:
 * `bus.streams.publish(spec, ...)`, `consume` and `consumeEach` take the message type from here.
 */
export type StreamRegistry = {
  [Streams.callbackRequests.subject]: CallbackRequestBatch;
  [Streams.receivableRegistrations.subject]: RegistrationJob;
  [Streams.bookletBuilds.subject]: BookletJob;
  [Streams.receivableCancellations.subject]: CancellationJob;
};

/** What a bus registry is made of: request-reply exchanges and stream messages, by relative subject. */
export interface BusRegistryShape {
  requests: Record<string, Exchange<unknown, unknown>>;
  streams: Record<string, unknown>;
}

/** The registry of this system's bus; the bus lib's own tests bring one of their own. */
export type BusRegistry = { requests: RequestReplyRegistry; streams: StreamRegistry };

/** A request-reply subject of registry R. */
export type RequestSubject<R extends BusRegistryShape = BusRegistry> = keyof R['requests'] & string;
/** What a request on subject S carries. */
export type RequestOf<
  S extends RequestSubject<R>,
  R extends BusRegistryShape = BusRegistry,
> = R['requests'][S]['request'];
/** The data of a success reply on subject S. */
export type ReplyOf<S extends RequestSubject<R>, R extends BusRegistryShape = BusRegistry> = R['requests'][S]['reply'];

/** A stream of registry streams M: a StreamSpec whose subject M lists. */
export type RegisteredStream<M extends BusRegistryShape['streams'] = StreamRegistry> = StreamSpec & {
  readonly subject: keyof M & string;
};
/** The message on stream S. */
export type StreamMessage<
  S extends RegisteredStream<M>,
  M extends BusRegistryShape['streams'] = StreamRegistry,
> = M[S['subject']];
