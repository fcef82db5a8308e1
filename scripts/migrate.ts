/**
 * `npm run migrate`: creates the database if missing, each service's role, and migrates every schema
 * (see migrate/run.ts), printing one line per schema: what it applied, up to date, or ahead of this
 * code. A release runs it once, before its apps start (a deploy's Job; `npm start` runs it first).
 * A failure prints one line and exits 1.
 */
import { describeStartupFailure } from '@payments/lifecycle';
import { migrateAll } from './migrate/run';

async function main(): Promise<void> {
  try {
    await migrateAll(process.env, { onResult: (line) => console.log(`[migrate] ${line}`) });
  } catch (err) {
    const known = describeStartupFailure(err)?.message;
    console.error(`[migrate] failed: ${known ?? (err instanceof Error ? err.message : String(err))}`);
    process.exitCode = 1;
  }
}

void main();
