import type { InstallmentView } from '@payments/contracts';

/** What booklet-svc asks of others: installments (receivables-svc), the payee (gateway, owner of tenants). */
export interface InstallmentSource {
  installments(tenantId: string, paymentSlipId: string): Promise<InstallmentView[]>;
  payeeName(tenantId: string): Promise<string>;
}

/** Where built PDFs live: Postgres here; an object store can implement the same two calls. */
export interface PdfStore {
  put(bookletId: string, pdf: Buffer): Promise<void>;
  get(bookletId: string): Promise<Buffer | undefined>;
}

/** Makes the signed, expiring download link of a booklet (served by the gateway). */
export type DownloadLinks = (bookletId: string) => string;
