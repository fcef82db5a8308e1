export { migrations } from './ordered';
export { SCHEMA } from './schema-name';
