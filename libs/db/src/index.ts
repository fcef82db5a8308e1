export * from './database';
export * from './migrate';
export * from './roles';
export * from './test-database';
export * from './unavailable';
export * from './online-indexes';
export * from './partitions';
