export * from './br-format';
