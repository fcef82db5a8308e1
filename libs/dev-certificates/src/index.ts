export * from './dev-certificates';
