export {
  connectBus,
  serviceBusOptions,
  type Bus,
  type BusOptions,
  type ServiceBusSettings,
  type RegisterHandlers,
  type RequestHandler,
  type RequestOptions,
  type ServeOptions,
  type StartWorkers,
  type Subscription,
} from './bus';
export {
  CLAIM_DIGEST_HEADER,
  CLAIM_HEADER,
  CLAIM_STORE_TTL_MS,
  ClaimReader,
  ClaimRefusedError,
  ClaimStoreMissingError,
  ClaimWriter,
  claimDigest,
  claimStoreStream,
  type ClaimRefusal,
} from './claim-check';
export { ClaimRecipientUnknownError, SystemClaimRouting, type ClaimRouting } from './payloads';
export { CredsFileError, type NatsCredentials } from './auth';
export { inboxPrefixOf } from './inbox';
export { DurableStreams } from './streams';
export { DEFAULT_FAIR_WINDOW, type BatchHandler, type Consumption, type MessageHandler } from './job-handlers';
export type { StreamSettings } from './stream-settings';
export { DeadLetterBox, DeadLetterNotFoundError, DeadLetterRedriveRefusedError } from './dead-letters';
export { DEFAULT_JOB_MAX_FAILURES, MAX_FAILURE_BACKOFF_MS } from './job-failures';
export { DEFAULT_STREAM_MAX_BYTES, publishErrorText, type StreamFill } from './stream-limits';
export { BusUnavailableError, checkBus, type CheckBusOptions, displayNatsUrl, type BusProblem } from './unavailable';
export { NoReplyError } from './requester';
export { natsServers } from './servers';
export { isTransientJetStreamError, JetStreamNotReadyError, retryTransient, STARTUP_RETRY_MS } from './jetstream-retry';
export {
  BusProvisionError,
  formatProvisionReport,
  provisionBus,
  provisionJobStreams,
  type ProvisionAction,
  type ProvisionEntry,
  type ProvisionKind,
  type ProvisionOptions,
  type ProvisionReport,
} from './provision';
export {
  BusTopologyError,
  checkTopology,
  topologyDifferences,
  topologyOf,
  type CheckTopologyOptions,
  type ServiceTopology,
  type TopologyDifference,
  type TopologyProblem,
} from './topology-check';
export { DEAD_LETTER_MAX_AGE_MS, DEFAULT_ACK_WAIT_MS, type BusLimits } from './topology-config';
