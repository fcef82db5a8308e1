import { assertIdentifier } from '@payments/db';
import { sql, type Kysely, type Migration } from 'kysely';
import { SCHEMA } from './schema-name';

export const stateCounts: Migration = {
  async up(db: Kysely<unknown>) {
    // Charges by state for the metrics, kept as states change: a scrape reads a handful of rows here,
    // never the receivables. Every change appends a row of +n / -n to state_count_changes (no row is
    // updated by two writers, so no hot row and no lock order between transactions), and a periodic
    // fold moves them into state_counts (domain/state-counts.ts). Triggers keep them, not the code:
    // the previous release, still writing during a rolling upgrade, is counted exactly too.
    await sql`create table state_counts (state text primary key, count bigint not null)`.execute(db);
    await sql`create table state_count_changes (state text not null, delta bigint not null)`.execute(db);
    assertIdentifier(SCHEMA);
    const changes = sql.raw(`${SCHEMA}.state_count_changes`);
    await sql`create function count_inserted_receivables() returns trigger language plpgsql as $$
      begin
        insert into ${changes} (state, delta) select state, count(*) from inserted group by state;
        return null;
      end $$`.execute(db);
    await sql`create function count_receivable_state_change() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' then
          insert into ${changes} (state, delta) values (old.state, -1), (new.state, 1);
        else
          insert into ${changes} (state, delta) values (old.state, -1);
        end if;
        return null;
      end $$`.execute(db);
    await sql`create function count_truncated_receivables() returns trigger language plpgsql as $$
      begin
        delete from ${changes};
        delete from ${sql.raw(`${SCHEMA}.state_counts`)};
        return null;
      end $$`.execute(db);
    // One insert per statement (intake stores a batch in one), one per row that changes state.
    await sql`create trigger receivables_count_insert after insert on receivables
      referencing new table as inserted for each statement execute function count_inserted_receivables()`.execute(db);
    await sql`create trigger receivables_count_update after update of state on receivables
      for each row when (old.state is distinct from new.state) execute function count_receivable_state_change()`.execute(
      db,
    );
    await sql`create trigger receivables_count_delete after delete on receivables
      for each row execute function count_receivable_state_change()`.execute(db);
    await sql`create trigger receivables_count_truncate after truncate on receivables
      for each statement execute function count_truncated_receivables()`.execute(db);
    // Counted once, here: the triggers above lock out writers of receivables until the commit, so
    // no change falls between this count and the first one they record.
    await sql`insert into state_counts (state, count) select state, count(*) from receivables group by state`.execute(
      db,
    );
  },
};
