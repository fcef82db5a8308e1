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
export { DurableStreams, type BatchHandler, type Consumption, type MessageHandler } from './streams';
export { BusUnavailableError, checkBus, displayNatsUrl, type BusProblem } from './unavailable';
