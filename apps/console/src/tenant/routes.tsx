/** @jsxRuntime automatic @jsxImportSource preact */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type Router from '@koa/router';
import { BOOKLET_DOWNLOAD_PATH, isUuid } from '@payments/contracts';
import { bearer, ok } from '../gateway/public-api';
import { asProblem, gatewayFetch, GatewayError } from '../gateway/problem';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { tenantSession } from '../session/guards';
import { render } from '../views/render';
import { brasiliaInstant, brasiliaLocalValue, formatsFor, localeOf, type Formats } from '../views/locale';
import type { MessageKey } from '../views/messages';
import type { TenantRouteDeps } from './mount';
import { BookletsPage } from './pages/booklets';
import { bookletLink, CallbackPage } from './pages/callback';
import { CALLBACK_STATUSES, CallbacksPage, type CallbackStatus } from './pages/callbacks';
import { ChargePage, type SlipOffer } from './pages/charge';
import { gatewaySlipLink, webLink, type SlipLinkKind } from './payment-data';
import { ChargesPage } from './pages/charges';
import { chargeFilters, exportChargesCsv, searchCharges } from './charge-search';

/** Rows per page of the charges search and of the callbacks list. */
const PAGE_SIZE = 50;
/** The Booklets page looks for booklet events among this many latest callbacks. */
const BOOKLET_SCAN = 200;
/** The charge page lists at most this many of its callbacks (a charge has a handful). */
const CHARGE_CALLBACKS = 100;

const EVENT_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The tenant's pages (prefix /tenant, behind requireRole('tenant')). Every gateway call carries the
 * session's JWT: what the tenant may see is the gateway's decision, so another tenant's charge or
 * event is the gateway's 404, shown as the not-found page.
 */
export function mountTenantRoutes(router: Router<ConsoleState>, deps: TenantRouteDeps): void {
  const { api } = deps;
  // A booklet of a thousand installments takes the gateway a while to start sending.
  const download = gatewayFetch({ gatewayTimeoutMs: deps.gatewayTimeoutMs * 3 });
  const auth = (ctx: ConsoleContext) => bearer(tenantSession(ctx).jwt);
  const page = (ctx: ConsoleContext) => ({ session: tenantSession(ctx), flash: ctx.state.flash, path: ctx.path });
  /** The request's text for a catalog key: flashes and errors are in the reader's language too. */
  const text = (ctx: ConsoleContext, key: MessageKey, vars?: Record<string, string | number>) =>
    formatsFor(localeOf(ctx)).t(key, vars);

  router.get('/', (ctx) => ctx.redirect('/tenant/charges'));

  router.get('/charges', async (ctx) => {
    const filters = chargeFilters(ctx);
    const jwt = tenantSession(ctx).jwt;
    const { items, next } = await searchCharges(api, jwt, filters, PAGE_SIZE, single(ctx.query.cursor));
    render(ctx, <ChargesPage {...page(ctx)} filters={filters} items={items} next={next} />);
  });

  // Every charge the filters select, as CSV, paged through the API's cursor (docs/console.md, "Pages").
  router.get('/charges.csv', async (ctx) => {
    const filters = chargeFilters(ctx);
    const jwt = tenantSession(ctx).jwt;
    await exportChargesCsv(
      ctx,
      filters,
      (cursor, limit) => searchCharges(api, jwt, filters, limit, cursor),
      (err) => deps.logger.error({ err }, 'charges CSV: the search failed after the download began; cut short'),
    );
  });

  router.get('/charges/lookup', (ctx) => {
    const id = single(ctx.query.id);
    if (!id || !isUuid(id)) throw new BadInputError('id', text(ctx, 'charge.badId'));
    ctx.redirect(`/tenant/charges/${id.toLowerCase()}`);
  });

  router.get('/charges/:id', async (ctx) => {
    const id = chargeId(ctx);
    const path = { uuid: id };
    const [charge, issued, history, callbacks, paymentData] = await Promise.all([
      api
        .POST('/api/v1/accounts-receivable/{uuid}/consult-transaction', { params: { path }, headers: auth(ctx) })
        .then((r) => ok('POST /api/v1/accounts-receivable/{uuid}/consult-transaction', r)),
      // As issued: the due date and the payer's tax id, which consult does not answer.
      api
        .GET('/api/v1/accounts-receivable/{uuid}', { params: { path }, headers: auth(ctx) })
        .then((r) => ok('GET /api/v1/accounts-receivable/{uuid}', r)),
      api
        .GET('/api/v1/accounts-receivable/{uuid}/history', { params: { path }, headers: auth(ctx) })
        .then((r) => ok('GET /api/v1/accounts-receivable/{uuid}/history', r)),
      api
        .GET('/api/v1/callbacks', {
          params: { query: { receivable_id: id, limit: CHARGE_CALLBACKS } },
          headers: auth(ctx),
        })
        .then((r) => ok('GET /api/v1/callbacks', r)),
      registeredPaymentData(ctx, id),
    ]);
    const offer = (kind: SlipLinkKind, link: string | undefined): SlipOffer => {
      if (!link) return undefined;
      if (gatewaySlipLink(link, kind, deps.gatewayUrl))
        return { via: 'console', href: `/tenant/charges/${id}/${kind === 'pdf' ? 'slip.pdf' : 'qrcode.png'}` };
      const atBank = webLink(link);
      return atBank ? { via: 'bank', href: atBank } : undefined;
    };
    render(
      ctx,
      <ChargePage
        {...page(ctx)}
        charge={charge}
        paymentData={paymentData}
        dueDate={issued.due_date}
        payerTaxId={issued.payer.tax_id}
        pdf={offer('pdf', paymentData?.pdf)}
        qrCode={offer('qrcode', paymentData?.qrcode_image)}
        history={history.items}
        callbacks={callbacks}
      />,
    );
  });

  // The slip PDF and the PIX QR image of a charge whose links are the gateway's signed ones
  // (downloadSlipPdf, downloadSlipQrCode): streamed like a booklet (docs/console.md, "Booklets").
  router.get('/charges/:id/slip.pdf', (ctx) => streamSlipFile(ctx, 'pdf'));
  router.get('/charges/:id/qrcode.png', (ctx) => streamSlipFile(ctx, 'qrcode'));

  /** The charge id of the path, or the not-found page. */
  function chargeId(ctx: ConsoleContext): string {
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw new NotFoundError(text(ctx, 'charge.notFound'));
    return id;
  }

  /** GET .../payment-data, or undefined while the bank has not registered the charge (its 404). */
  async function registeredPaymentData(ctx: ConsoleContext, id: string) {
    const result = await api.GET('/api/v1/accounts-receivable/{uuid}/payment-data', {
      params: { path: { uuid: id } },
      headers: auth(ctx),
    });
    if (result.response.status === 404) return undefined;
    return ok('GET /api/v1/accounts-receivable/{uuid}/payment-data', result);
  }

  /**
   * Reads the charge's payment data with the tenant's JWT (another tenant's charge is the gateway's
   * 404), takes its link only when it is this gateway's signed slip link, and streams the file. The
   * browser names no link: the console fetches nothing it did not read from the gateway itself.
   */
  async function streamSlipFile(ctx: ConsoleContext, kind: SlipLinkKind): Promise<void> {
    const id = chargeId(ctx);
    const data = await registeredPaymentData(ctx, id);
    const what = kind === 'pdf' ? 'PDF' : 'QR code';
    const link = data && gatewaySlipLink(kind === 'pdf' ? data.pdf : data.qrcode_image, kind, deps.gatewayUrl);
    if (!link) throw new NotFoundError(text(ctx, 'charge.noGatewayLink', { what }));
    const response = await download(new Request(link));
    if (!response.ok || !response.body) {
      const body: unknown = await response.json().catch(() => undefined);
      throw new GatewayError(`GET ${link.pathname}`, response.status, asProblem(body, response));
    }
    ctx.type = kind === 'pdf' ? 'application/pdf' : 'image/png';
    if (kind === 'pdf') ctx.set('content-disposition', `attachment; filename="boleto-${id}.pdf"`);
    ctx.set('cache-control', 'private, no-store');
    const length = response.headers.get('content-length');
    if (length) ctx.length = Number(length);
    ctx.body = Readable.fromWeb(response.body as WebReadableStream);
  }

  router.get('/callbacks', async (ctx) => {
    const status = callbackStatus(single(ctx.query.status));
    const cursor = single(ctx.query.cursor);
    const result = await api.GET('/api/v1/callbacks', {
      params: { query: { status, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      headers: auth(ctx),
    });
    const items = ok('GET /api/v1/callbacks', result);
    const next = result.response.headers.get('x-next-cursor') || undefined;
    render(
      ctx,
      <CallbacksPage
        {...page(ctx)}
        status={status}
        items={items}
        next={next}
        replaySince={brasiliaLocalValue(Date.now() - 60 * 60_000)}
      />,
    );
  });

  router.get('/callbacks/:event_id', async (ctx) => {
    const eventId = ctx.params.event_id ?? '';
    if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
    const event = ok(
      'GET /api/v1/callbacks/{event_id}',
      await api.GET('/api/v1/callbacks/{event_id}', { params: { path: { event_id: eventId } }, headers: auth(ctx) }),
    );
    render(ctx, <CallbackPage {...page(ctx)} event={event} />);
  });

  router.post('/callbacks/replay', async (ctx) => {
    const form = await readForm(ctx);
    const since = brasiliaInstant(single(form.get('since')));
    if (!since) throw new BadInputError('since', text(ctx, 'callbacks.badSince'));
    const untilText = single(form.get('until'));
    const until = brasiliaInstant(untilText);
    if (untilText && !until) throw new BadInputError('until', text(ctx, 'callbacks.badUntil'));
    const answer = ok(
      'POST /api/v1/callbacks/replay',
      await api.POST('/api/v1/callbacks/replay', {
        headers: { ...auth(ctx), 'Idempotency-Key': randomUUID() },
        body: { since, ...(until ? { until } : {}) },
      }),
    );
    deps.flash(ctx, 'info', text(ctx, 'callbacks.replayed', { count: answer.replayed }));
    ctx.redirect('/tenant/callbacks');
  });

  router.post('/callbacks/:event_id/retry', async (ctx) => {
    const eventId = ctx.params.event_id ?? '';
    if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
    ok(
      'POST /api/v1/callbacks/{event_id}/retry',
      await api.POST('/api/v1/callbacks/{event_id}/retry', {
        params: { path: { event_id: eventId } },
        headers: { ...auth(ctx), 'Idempotency-Key': randomUUID() },
      }),
    );
    deps.flash(ctx, 'info', text(ctx, 'callback.queued'));
    ctx.redirect(`/tenant/callbacks/${encodeURIComponent(eventId)}`);
  });

  router.get('/booklets', async (ctx) => {
    const latest = ok(
      'GET /api/v1/callbacks',
      await api.GET('/api/v1/callbacks', { params: { query: { limit: BOOKLET_SCAN } }, headers: auth(ctx) }),
    );
    render(
      ctx,
      <BookletsPage
        {...page(ctx)}
        paymentSlipId={single(ctx.query.payment_slip_id)}
        urlCallback={single(ctx.query.url_callback)}
        events={latest.filter((e) => e.event_type.startsWith('booklet.'))}
      />,
    );
  });

  router.post('/booklets', async (ctx) => {
    const form = await readForm(ctx);
    const slipId = single(form.get('payment_slip_id'));
    const urlCallback = single(form.get('url_callback'));
    if (!slipId || !isUuid(slipId)) throw new BadInputError('payment_slip_id', text(ctx, 'booklets.badSlipId'));
    if (!urlCallback) throw new BadInputError('url_callback', text(ctx, 'booklets.badUrl'));
    const answer = ok(
      'POST /api/v1/bank-slip-booklet/{uuid}',
      await api.POST('/api/v1/bank-slip-booklet/{uuid}', {
        params: { path: { uuid: slipId }, header: { 'Idempotency-Key': randomUUID() } },
        headers: auth(ctx),
        body: { url_callback: urlCallback },
      }),
    );
    deps.flash(ctx, 'info', text(ctx, 'booklets.requested', { message: answer.message, url: urlCallback }));
    ctx.redirect('/tenant/booklets');
  });

  router.get('/booklets/download', async (ctx) => {
    const link = bookletDownload(await downloadLinkText(ctx), deps.gatewayUrl, formatsFor(localeOf(ctx)).t);
    const response = await download(new Request(link));
    if (!response.ok || !response.body) {
      const body: unknown = await response.json().catch(() => undefined);
      throw new GatewayError(`GET ${BOOKLET_DOWNLOAD_PATH}`, response.status, asProblem(body, response));
    }
    const id = link.pathname.slice(BOOKLET_DOWNLOAD_PATH.length + 1);
    ctx.type = 'application/pdf';
    ctx.set('content-disposition', `attachment; filename="booklet-${id}.pdf"`);
    ctx.set('cache-control', 'private, no-store');
    const length = response.headers.get('content-length');
    if (length) ctx.length = Number(length);
    // Streamed as it arrives: a booklet of a thousand installments is megabytes.
    ctx.body = Readable.fromWeb(response.body as WebReadableStream);
  });

  /**
   * The link to download: the `download` of one of the tenant's own booklet.sent events (`?event=`,
   * read with its JWT: another tenant's event is the gateway's 404), or one pasted (`?link=`).
   */
  async function downloadLinkText(ctx: ConsoleContext): Promise<string | undefined> {
    const eventId = single(ctx.query.event);
    if (eventId === undefined) return single(ctx.query.link);
    if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
    const event = ok(
      'GET /api/v1/callbacks/{event_id}',
      await api.GET('/api/v1/callbacks/{event_id}', { params: { path: { event_id: eventId } }, headers: auth(ctx) }),
    );
    const link = bookletLink(event);
    if (!link) throw new NotFoundError(text(ctx, 'callback.notBooklet'));
    return link;
  }
}

/**
 * A booklet's signed download link, only when it is this gateway's booklet download (path and
 * query exactly as booklet-svc signs them), re-based on GATEWAY_URL: the console fetches no other
 * address for anyone.
 */
function bookletDownload(text: string | undefined, gatewayUrl: string, t: Formats['t']): URL {
  let url: URL;
  try {
    url = new URL(text ?? '');
  } catch {
    throw new BadInputError('link', t('booklets.badLink'));
  }
  const id = url.pathname.startsWith(`${BOOKLET_DOWNLOAD_PATH}/`)
    ? url.pathname.slice(BOOKLET_DOWNLOAD_PATH.length + 1)
    : '';
  const expires = url.searchParams.get('expires');
  const signature = url.searchParams.get('signature');
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id) || !expires || !signature)
    throw new BadInputError(
      'link',
      t('booklets.badLinkShape', { shape: `${BOOKLET_DOWNLOAD_PATH}/<id>?expires=...&signature=...` }),
    );
  const link = new URL(`${gatewayUrl}${BOOKLET_DOWNLOAD_PATH}/${id}`);
  link.searchParams.set('expires', expires);
  link.searchParams.set('signature', signature);
  return link;
}

function callbackStatus(value: string | undefined): CallbackStatus | undefined {
  if (value === undefined) return undefined;
  if (!(CALLBACK_STATUSES as readonly string[]).includes(value))
    throw new BadInputError('status', `one of ${CALLBACK_STATUSES.join(', ')}, or any`);
  return value as CallbackStatus;
}
