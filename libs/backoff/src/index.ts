export { type DoublingDelay, doublingDelayMs } from './doubling-delay';
