export { migrations } from './ordered';
export { onlineIndexes } from './online-indexes';
export { SCHEMA } from './schema-name';
