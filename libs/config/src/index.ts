export * from './env';
export * from './common';
export * from './run-mode';
export * from './production-secrets';
export * from './dev-inter-sandbox';
