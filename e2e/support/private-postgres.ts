// Moved to libs/test-support, so that app tests (callback-svc's Postgres restart) can stop one too.
export { PrivatePostgres } from '@payments/test-support/private-postgres';
