export {
  connectBus,
  type Bus,
  type BusOptions,
  type RegisterHandlers,
  type RequestHandler,
  type RequestOptions,
  type ServeOptions,
  type StartWorkers,
  type Subscription,
} from './bus';
export { ClaimCheck, type ClaimStoreLimits } from './claim-check';
export { CredsFileError, type NatsCredentials } from './auth';
export { inboxPrefixOf } from './inbox';
export {
  DEFAULT_FAIR_WINDOW,
  DurableStreams,
  type BatchHandler,
  type Consumption,
  type MessageHandler,
  type StreamSettings,
} from './streams';
export { DeadLetterBox, DeadLetterNotFoundError } from './dead-letters';
export { DEFAULT_JOB_MAX_FAILURES, MAX_FAILURE_BACKOFF_MS } from './job-failures';
export { DEFAULT_STREAM_MAX_BYTES, publishErrorText, type StreamFill } from './stream-limits';
export { BusUnavailableError, checkBus, type CheckBusOptions, displayNatsUrl, type BusProblem } from './unavailable';
export { NoReplyError } from './requester';
export { natsServers } from './servers';
export { isTransientJetStreamError, JetStreamNotReadyError, retryTransient, STARTUP_RETRY_MS } from './jetstream-retry';
