import type Router from '@koa/router';
import type { Bus } from '@payments/bus';
import { SLIP_PDF_PATH, SLIP_QRCODE_PATH, Subjects } from '@payments/contracts';
import type { GatewayState } from '../http/context';
import { requireSignedLink } from '../http/signed-link';

/** A bank answers a slip PDF within seconds; receivables-svc may have to fetch an OAuth token first. */
const SLIP_PDF_TIMEOUT_MS = 30_000;
/** A QR code is drawn by receivables-svc from its own database, no bank involved. */
const SLIP_QRCODE_TIMEOUT_MS = 10_000;
const WHEN_EXPIRED = 'slip links last until 90 days after the due date';

/**
 * GET {SLIP_PDF_PATH}/{receivable_id}?expires&signature: the slip PDF of a charge whose bank serves it
 * only behind its own authentication (Inter); receivables-svc fetches it with the tenant's account.
 * No bearer token: the signed link is the credential. Altered link: 403; expired: 410.
 */
export function mountSlipPdfDownload(router: Router<GatewayState>, bus: Bus, downloadLinkSecret: string): void {
  router.get(`${SLIP_PDF_PATH}/:receivable_id`, async (ctx) => {
    const receivableId = ctx.params.receivable_id ?? '';
    requireSignedLink(ctx, downloadLinkSecret, receivableId, WHEN_EXPIRED);
    const reply = await bus.request(
      Subjects.receivables.slipPdf,
      { receivable_id: receivableId },
      { service: 'receivables', timeoutMs: SLIP_PDF_TIMEOUT_MS },
    );
    ctx.status = 200;
    ctx.type = 'application/pdf';
    ctx.set('content-disposition', `inline; filename="boleto-${receivableId}.pdf"`);
    ctx.set('cache-control', 'private, max-age=300');
    ctx.body = Buffer.from(reply.pdf_base64, 'base64');
  });
}

/**
 * GET {SLIP_QRCODE_PATH}/{receivable_id}?expires&signature: the PNG QR code of a charge's PIX
 * copy-and-paste, for banks that serve no QR image (Inter); receivables-svc draws it. Checked like
 * the slip PDF link: altered, 403; expired, 410.
 */
export function mountSlipQrCodeDownload(router: Router<GatewayState>, bus: Bus, downloadLinkSecret: string): void {
  router.get(`${SLIP_QRCODE_PATH}/:receivable_id`, async (ctx) => {
    const receivableId = ctx.params.receivable_id ?? '';
    requireSignedLink(ctx, downloadLinkSecret, receivableId, WHEN_EXPIRED);
    const reply = await bus.request(
      Subjects.receivables.slipQrCode,
      { receivable_id: receivableId },
      { service: 'receivables', timeoutMs: SLIP_QRCODE_TIMEOUT_MS },
    );
    ctx.status = 200;
    ctx.type = 'image/png';
    ctx.set('content-disposition', `inline; filename="qrcode-${receivableId}.png"`);
    ctx.set('cache-control', 'private, max-age=300');
    ctx.body = Buffer.from(reply.png_base64, 'base64');
  });
}
