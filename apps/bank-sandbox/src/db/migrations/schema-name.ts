export const SCHEMA = 'bank_sandbox';
