import { sql, type Kysely, type Migration } from 'kysely';

export const bankNoticeRefunds: Migration = {
  async up(db: Kysely<unknown>) {
    // A refund made at the bank (a PIX devolução) is stored as a notice of its own kind, with the
    // bank's id of the refund: it is written in the charge's history once per refund id. The wider
    // check is NOT VALID: every row already meets the narrower one, so nothing is read under the lock.
    // A nullable column: no table rewrite.
    await sql`alter table bank_notices
      drop constraint bank_notices_kind_check,
      add constraint bank_notices_kind_check check (kind in ('paid', 'cancelled', 'other', 'refunded')) not valid,
      add column refund_id text`.execute(db);
  },
};
