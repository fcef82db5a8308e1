export * from './env';
export * from './common';
export * from './migrate';
export * from './run-mode';
export * from './production-secrets';
export * from './dev-inter-sandbox';
