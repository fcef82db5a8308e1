/** The gateway's Postgres schema, which its migrations and its role own. */
export const SCHEMA = 'gateway';
