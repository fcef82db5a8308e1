import { SLIP_PDF_PATH, SLIP_QRCODE_PATH, type ProviderKind } from '@payments/contracts';
import { signLink } from '@payments/signed-links';
import type { ProviderAccount, SlipLinks } from '../../domain/ports';

/**
 * Which banks serve a slip PDF only behind their own authentication and no QR code image at all
 * (Inter, and any bank's PIX API, which hands over only the copy-and-paste): their charges get gateway
 * links for both, the ERP cannot use the bank's.
 */
const SLIP_FILES_THROUGH_GATEWAY: Record<ProviderKind, boolean> = { sandbox: false, inter: true, pix: true };

const DAY_MS = 24 * 3600 * 1000;
/** A slip stays downloadable for a while after its due date: late payers and bookkeeping still need it. */
const DAYS_AFTER_DUE = 90;
/** ...and for at least this long after the link is made, whatever the due date. */
const MIN_DAYS_FROM_NOW = 30;

type ReceivableRef = { id: string; dueDate: string };

/**
 * Slip PDF and QR code image links: the bank's URLs where they are public (the sandbox), else signed
 * gateway links `${PUBLIC_BASE_URL}${SLIP_PDF_PATH | SLIP_QRCODE_PATH}/{receivable id}?expires&signature`
 * (signed with DOWNLOAD_LINK_SECRET, checked by the gateway, which asks us over the bus for the PDF,
 * fetched from the bank, or the QR code PNG, drawn from the charge's PIX copy-and-paste).
 */
export class SignedSlipLinks implements SlipLinks {
  constructor(private readonly options: { publicBaseUrl: string; downloadLinkSecret: string; now?: () => Date }) {}

  /** A charge with no PDF at its bank (a PIX charge: bankPdfUrl '') gets no link to one either. */
  forPdf(account: ProviderAccount, receivable: ReceivableRef, bankPdfUrl: string): string {
    if (bankPdfUrl === '') return '';
    return SLIP_FILES_THROUGH_GATEWAY[account.provider] ? this.gatewayLink(SLIP_PDF_PATH, receivable) : bankPdfUrl;
  }

  forQrCode(account: ProviderAccount, receivable: ReceivableRef, bankQrCodeUrl: string): string {
    return SLIP_FILES_THROUGH_GATEWAY[account.provider]
      ? this.gatewayLink(SLIP_QRCODE_PATH, receivable)
      : bankQrCodeUrl;
  }

  private gatewayLink(path: string, receivable: ReceivableRef): string {
    const now = this.options.now?.() ?? new Date();
    const { expires, signature } = signLink(
      this.options.downloadLinkSecret,
      receivable.id,
      slipLinkExpiry(receivable.dueDate, now),
    );
    const base = this.options.publicBaseUrl.replace(/\/+$/, '');
    return `${base}${path}/${receivable.id}?expires=${expires}&signature=${signature}`;
  }
}

/** Due date (YYYY-MM-DD) + 90 days, but at least 30 days from now. */
export function slipLinkExpiry(dueDate: string, now: Date): Date {
  const afterDue = Date.parse(`${dueDate}T00:00:00Z`) + DAYS_AFTER_DUE * DAY_MS;
  return new Date(Math.max(afterDue, now.getTime() + MIN_DAYS_FROM_NOW * DAY_MS));
}
