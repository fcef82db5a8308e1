import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import { Subjects, type InstallmentsReply } from '@payments/contracts';
import type { BookletsDatabase } from '../db/schema';
import type { InstallmentSource, PdfStore } from '../domain/ports';

/** Installments and their payee from receivables-svc, and the tenant's name from the gateway, over NATS. */
export class BusInstallmentSource implements InstallmentSource {
  constructor(private readonly bus: Bus) {}

  async installments(tenantId: string, paymentSlipId: string): Promise<InstallmentsReply> {
    return this.bus.request(
      Subjects.receivables.installments,
      { tenant_id: tenantId, payment_slip_id: paymentSlipId },
      { service: 'receivables' },
    );
  }

  async payeeName(tenantId: string): Promise<string> {
    const reply = await this.bus.request(Subjects.tenants.profile, { tenant_id: tenantId }, { service: 'gateway' });
    return reply.name;
  }
}

/** PDFs in the service's own schema (bytea). */
export class PostgresPdfStore implements PdfStore {
  constructor(private readonly db: Kysely<BookletsDatabase>) {}

  async put(bookletId: string, pdf: Buffer): Promise<void> {
    await this.db
      .insertInto('booklet_files')
      .values({ booklet_id: bookletId, pdf })
      .onConflict((oc) => oc.column('booklet_id').doUpdateSet({ pdf }))
      .execute();
  }

  async get(bookletId: string): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('booklet_files')
      .select('pdf')
      .where('booklet_id', '=', bookletId)
      .executeTakeFirst();
    return row?.pdf;
  }
}
