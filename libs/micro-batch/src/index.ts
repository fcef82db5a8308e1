export { MicroBatcher, type MicroBatchSettings, type ItemOutcome } from './micro-batcher';
