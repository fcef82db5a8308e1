import type { InstallmentsReply } from '@payments/contracts';

/**
 * What booklet-svc asks of others: the installments and their beneficiary (receivables-svc), and the
 * tenant's name (gateway, owner of tenants) for installments that predate provider accounts.
 */
export interface InstallmentSource {
  installments(tenantId: string, paymentSlipId: string): Promise<InstallmentsReply>;
  payeeName(tenantId: string): Promise<string>;
}

/** Where built PDFs live: Postgres here; an object store can implement the same two calls. */
export interface PdfStore {
  put(bookletId: string, pdf: Buffer): Promise<void>;
  get(bookletId: string): Promise<Buffer | undefined>;
}

/** Makes the signed, expiring download link of a booklet (served by the gateway). */
export type DownloadLinks = (bookletId: string) => string;
