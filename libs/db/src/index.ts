export * from './database';
export * from './migrate';
export * from './test-database';
export * from './unavailable';
export * from './online-indexes';
