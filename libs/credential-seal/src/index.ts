export * from './credential-seal';
