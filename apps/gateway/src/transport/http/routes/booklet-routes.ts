import type Router from '@koa/router';
import type { Bus } from '@payments/bus';
import { Subjects, type BookletRequest } from '@payments/contracts';
import type { GatewayContext, GatewayState } from '../context';
import { mountOperation, uuidParam, endpoint, type Endpoint, type MountableEndpoint } from '../endpoint';
import { callbackUrlPolicy, validateBooklet } from '../callback-urls';
import { requestBody } from '../json-body';
import { validationError } from '../problem';
import { requireSignedLink } from '../signed-link';

/** The download rate limit (rate-limit.ts downloadRateLimit), one for every kind of signed file. */
export type DownloadGuard = (ctx: GatewayContext, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * POST /api/v1/bank-slip-booklet/{payment_slip_id}: queue a booklet. In production a
 * url_callback naming a non-public address or localhost is refused (422) before the bus is asked.
 */
export function bookletEndpoints(bus: Bus, runMode: 'development' | 'production'): MountableEndpoint[] {
  const callbackUrls = callbackUrlPolicy(runMode);
  const request: Endpoint<{ paymentSlipId: string; body: BookletRequest }> = {
    operation: 'requestBooklet',
    parse(ctx) {
      const paymentSlipId = uuidParam(ctx, 'uuid');
      const result = validateBooklet(requestBody(ctx), callbackUrls);
      if (!result.ok) throw validationError(result.errors);
      return { paymentSlipId, body: result.value };
    },
    async handle({ paymentSlipId, body }, ctx, tenant) {
      const reply = await bus.request(Subjects.booklets.request, {
        tenant_id: tenant.tenantId,
        payment_slip_id: paymentSlipId,
        url_callback: body.url_callback,
        // The key was checked by the pipeline before handle() runs (the endpoint requires it).
        idempotency_key: ctx.get('idempotency-key'),
      });
      return { status: 202, body: reply };
    },
  };
  return [endpoint(request)];
}

/**
 * GET {BOOKLET_DOWNLOAD_PATH}/{booklet_id}?expires&signature: the booklet PDF, for whoever holds a link
 * booklet-svc signed (no bearer token). Altered link: 403; expired: 410; over `limit` (per client
 * address): 429.
 */
export function mountBookletDownload(
  router: Router<GatewayState>,
  bus: Bus,
  downloadLinkSecret: string,
  limit: DownloadGuard,
): void {
  mountOperation(router, 'downloadBooklet', [
    limit,
    async (ctx) => {
      const bookletId = ctx.params.booklet_id ?? '';
      requireSignedLink(ctx, downloadLinkSecret, bookletId, 'request the booklet again');
      const reply = await bus.request(
        Subjects.booklets.download,
        { booklet_id: bookletId },
        { service: 'booklets', timeoutMs: 30_000 },
      );
      ctx.status = 200;
      ctx.type = 'application/pdf';
      ctx.set('content-disposition', `inline; filename="carne-${reply.payment_slip_id}.pdf"`);
      ctx.set('cache-control', 'private, max-age=300');
      ctx.body = Buffer.from(reply.pdf_base64, 'base64');
    },
  ]);
}
