export * from './errors';
export * from './problem';
export * from './subjects';
export * from './common';
export * from './auth';
export * from './clients';
export * from './validation';
export * from './bus';
