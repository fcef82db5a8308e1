import type Router from '@koa/router';
import type { Bus } from '@payments/bus';
import { SLIP_PDF_PATH, Subjects } from '@payments/contracts';
import type { GatewayState } from '../http/context';
import { requireSignedLink } from '../http/signed-link';

/** A bank answers a slip PDF within seconds; receivables-svc may have to fetch an OAuth token first. */
const SLIP_PDF_TIMEOUT_MS = 30_000;

/**
 * GET {SLIP_PDF_PATH}/{receivable_id}?expires&signature: the slip PDF of a charge whose bank serves it
 * only behind its own authentication (Inter); receivables-svc fetches it with the tenant's account.
 * No bearer token: the signed link is the credential. Altered link: 403; expired: 410.
 */
export function mountSlipPdfDownload(router: Router<GatewayState>, bus: Bus, downloadLinkSecret: string): void {
  router.get(`${SLIP_PDF_PATH}/:receivable_id`, async (ctx) => {
    const receivableId = ctx.params.receivable_id ?? '';
    requireSignedLink(ctx, downloadLinkSecret, receivableId, 'slip PDF links last until 90 days after the due date');
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
