export { connectBus, type Bus, type BusOptions, type RequestHandler, type ServeOptions } from './bus';
export { ClaimCheck } from './claim-check';
export { DurableStreams, type BatchHandler, type Consumption, type MessageHandler } from './streams';
export { BusUnavailableError, checkBus, displayNatsUrl, type BusProblem } from './unavailable';
