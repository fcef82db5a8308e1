export { migrations } from './ordered';
export { onlineIndexes } from './online-indexes';
export { SCHEMA } from './schema-name';
export { PAYER_TAX_ID_SQL, searchFilterIndexes } from './search-filter-indexes';
