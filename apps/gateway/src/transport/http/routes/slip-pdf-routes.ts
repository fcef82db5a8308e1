import type Router from '@koa/router';
import type { Bus } from '@payments/bus';
import { Subjects, type OperationId } from '@payments/contracts';
import type { GatewayState } from '../context';
import { mountOperation } from '../endpoint';
import { requireSignedLink } from '../signed-link';
import type { DownloadGuard } from './booklet-routes';

/** A bank answers a slip PDF within seconds; receivables-svc may have to fetch an OAuth token first. */
const SLIP_PDF_TIMEOUT_MS = 30_000;
/** A QR code is drawn by receivables-svc from its own database, no bank involved. */
const SLIP_QRCODE_TIMEOUT_MS = 10_000;
const WHEN_EXPIRED = 'slip links last until 90 days after the due date';

/** One kind of slip file behind a signed link: where it is served, how it is asked for, how it is sent. */
interface SlipFile {
  /** Its operation in libs/contracts, which says where it is served. */
  operation: OperationId;
  timeoutMs: number;
  fetch(bus: Bus, receivableId: string, timeoutMs: number): Promise<string>;
  type: string;
  filename(receivableId: string): string;
}

/**
 * GET {path}/{receivable_id}?expires&signature: a slip file of a charge whose bank serves it only behind
 * its own authentication, or not at all (Inter; a bank's PIX API draws no QR image of a PIX charge). No
 * bearer token: the signed link is the credential.
 * Altered link: 403; expired: 410; over the download limit (per client address): 429.
 */
function mountSlipFile(
  router: Router<GatewayState>,
  bus: Bus,
  downloadLinkSecret: string,
  limit: DownloadGuard,
  file: SlipFile,
): void {
  mountOperation(router, file.operation, [
    limit,
    async (ctx) => {
      const receivableId = ctx.params.receivable_id ?? '';
      requireSignedLink(ctx, downloadLinkSecret, receivableId, WHEN_EXPIRED);
      const base64 = await file.fetch(bus, receivableId, file.timeoutMs);
      ctx.status = 200;
      ctx.type = file.type;
      ctx.set('content-disposition', `inline; filename="${file.filename(receivableId)}"`);
      ctx.set('cache-control', 'private, max-age=300');
      ctx.body = Buffer.from(base64, 'base64');
    },
  ]);
}

/** The slip PDF (Inter's), which receivables-svc fetches with the tenant's account. */
export function mountSlipPdfDownload(
  router: Router<GatewayState>,
  bus: Bus,
  downloadLinkSecret: string,
  limit: DownloadGuard,
): void {
  mountSlipFile(router, bus, downloadLinkSecret, limit, {
    operation: 'downloadSlipPdf',
    timeoutMs: SLIP_PDF_TIMEOUT_MS,
    fetch: async (b, id, timeoutMs) =>
      (await b.request(Subjects.receivables.slipPdf, { receivable_id: id }, { service: 'receivables', timeoutMs }))
        .pdf_base64,
    type: 'application/pdf',
    filename: (id) => `boleto-${id}.pdf`,
  });
}

/** The PNG QR code of a charge's PIX copy-and-paste, for banks that serve no QR image; receivables-svc draws it. */
export function mountSlipQrCodeDownload(
  router: Router<GatewayState>,
  bus: Bus,
  downloadLinkSecret: string,
  limit: DownloadGuard,
): void {
  mountSlipFile(router, bus, downloadLinkSecret, limit, {
    operation: 'downloadSlipQrCode',
    timeoutMs: SLIP_QRCODE_TIMEOUT_MS,
    fetch: async (b, id, timeoutMs) =>
      (await b.request(Subjects.receivables.slipQrCode, { receivable_id: id }, { service: 'receivables', timeoutMs }))
        .png_base64,
    type: 'image/png',
    filename: (id) => `qrcode-${id}.png`,
  });
}
