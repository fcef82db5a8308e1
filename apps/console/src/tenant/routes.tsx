/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import type { ConsoleState } from '../http/context';
import { bookletsPage, downloadBooklet, requestBooklet } from './booklet-handlers';
import { callbackPage, callbacksPage, replayCallbacks, retryCallback } from './callback-handlers';
import { chargeLookup, chargePage, chargesCsv, chargesPage, slipFile } from './charge-handlers';
import { tenantKit } from './handler-kit';
import type { TenantRouteDeps } from './mount';

/**
 * The tenant's pages (prefix /tenant, behind requireRole('tenant')). Every gateway call carries the
 * session's JWT: what the tenant may see is the gateway's decision, so another tenant's charge or
 * event is the gateway's 404, shown as the not-found page. The handlers are in one file per page.
 */
export function mountTenantRoutes(router: Router<ConsoleState>, deps: TenantRouteDeps): void {
  const kit = tenantKit(deps);

  router.get('/', (ctx) => ctx.redirect('/tenant/charges'));

  router.get('/charges', (ctx) => chargesPage(kit, ctx));
  // Every charge the filters select, as CSV, paged through the API's cursor (docs/console.md, "Pages").
  router.get('/charges.csv', (ctx) => chargesCsv(kit, ctx));
  router.get('/charges/lookup', (ctx) => chargeLookup(ctx));
  router.get('/charges/:id', (ctx) => chargePage(kit, ctx));
  // The slip PDF and the PIX QR image of a charge whose links are the gateway's signed ones
  // (downloadSlipPdf, downloadSlipQrCode): streamed like a booklet (docs/console.md, "Booklets").
  router.get('/charges/:id/slip.pdf', (ctx) => slipFile(kit, ctx, 'pdf'));
  router.get('/charges/:id/qrcode.png', (ctx) => slipFile(kit, ctx, 'qrcode'));

  router.get('/callbacks', (ctx) => callbacksPage(kit, ctx));
  router.get('/callbacks/:event_id', (ctx) => callbackPage(kit, ctx));
  router.post('/callbacks/replay', (ctx) => replayCallbacks(kit, ctx));
  router.post('/callbacks/:event_id/retry', (ctx) => retryCallback(kit, ctx));

  router.get('/booklets', (ctx) => bookletsPage(kit, ctx));
  router.post('/booklets', (ctx) => requestBooklet(kit, ctx));
  router.get('/booklets/download', (ctx) => downloadBooklet(kit, ctx));
}
