import { SLIP_PDF_PATH, type ProviderKind } from '@payments/contracts';
import { signLink } from '@payments/signed-links';
import type { ProviderAccount, SlipPdfLinks } from '../domain/ports';

/** Which banks serve a slip PDF only behind their own authentication (the ERP then gets a gateway link). */
const PDF_BEHIND_BANK_AUTH: Record<ProviderKind, boolean> = { sandbox: false, inter: true };

const DAY_MS = 24 * 3600 * 1000;
/** A slip stays downloadable for a while after its due date: late payers and bookkeeping still need it. */
const DAYS_AFTER_DUE = 90;
/** ...and for at least this long after the link is made, whatever the due date. */
const MIN_DAYS_FROM_NOW = 30;

/**
 * Slip PDF links: the bank's URL where it is public (the sandbox), else a signed gateway link
 * `${PUBLIC_BASE_URL}${SLIP_PDF_PATH}/{receivable id}?expires&signature` (signed with DOWNLOAD_LINK_SECRET,
 * checked by the gateway, which asks us for the PDF over the bus).
 */
export class SignedSlipPdfLinks implements SlipPdfLinks {
  constructor(private readonly options: { publicBaseUrl: string; downloadLinkSecret: string; now?: () => Date }) {}

  forCharge(account: ProviderAccount, receivable: { id: string; dueDate: string }, bankPdfUrl: string): string {
    if (!PDF_BEHIND_BANK_AUTH[account.provider]) return bankPdfUrl;
    const now = this.options.now?.() ?? new Date();
    const { expires, signature } = signLink(
      this.options.downloadLinkSecret,
      receivable.id,
      slipPdfLinkExpiry(receivable.dueDate, now),
    );
    const base = this.options.publicBaseUrl.replace(/\/+$/, '');
    return `${base}${SLIP_PDF_PATH}/${receivable.id}?expires=${expires}&signature=${signature}`;
  }
}

/** Due date (YYYY-MM-DD) + 90 days, but at least 30 days from now. */
export function slipPdfLinkExpiry(dueDate: string, now: Date): Date {
  const afterDue = Date.parse(`${dueDate}T00:00:00Z`) + DAYS_AFTER_DUE * DAY_MS;
  return new Date(Math.max(afterDue, now.getTime() + MIN_DAYS_FROM_NOW * DAY_MS));
}
