import type { Kysely } from 'kysely';
import { createDatabase, createTestDatabase } from '@payments/db';
import { SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';

/**
 * A database of its own for each test, not migrated: for tests that migrate it themselves, to the
 * previous release's migrations first. `use` receives the connection before each test.
 */
export function useEmptyDatabase(use: (db: Kysely<ReceivablesDatabase>) => void): void {
  let test: { url: string; drop: () => Promise<void> } | undefined;
  let db: Kysely<ReceivablesDatabase> | undefined;
  beforeEach(async () => {
    test = await createTestDatabase();
    db = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
    use(db);
  });
  afterEach(async () => {
    await db?.destroy();
    await test?.drop();
  });
}
