export { serializeError } from './errors';
export * from './logger';
