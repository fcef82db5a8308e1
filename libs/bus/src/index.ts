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
export { ClaimCheck } from './claim-check';
export { CredsFileError, type NatsCredentials } from './auth';
export { inboxPrefixOf } from './inbox';
export { DurableStreams, type BatchHandler, type Consumption, type MessageHandler } from './streams';
export { BusUnavailableError, checkBus, type CheckBusOptions, displayNatsUrl, type BusProblem } from './unavailable';
