export * from './signed-links';
