/** @jsxRuntime automatic @jsxImportSource preact */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { BOOKLET_DOWNLOAD_PATH, isUuid } from '@payments/contracts';
import { ok } from '../gateway/public-api';
import { asProblem, GatewayError } from '../gateway/problem';
import type { ConsoleContext } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { render } from '../views/render';
import { formatsFor, localeOf, type Formats } from '../views/locale';
import { auth, BOOKLET_SCAN, EVENT_ID, page, text, type TenantKit } from './handler-kit';
import { BookletsPage } from './pages/booklets';
import { bookletLink } from './pages/callback';

/** GET /booklets: the request form and the latest booklet events. */
export async function bookletsPage({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const latest = ok(
    'GET /api/v1/callbacks',
    await deps.api.GET('/api/v1/callbacks', { params: { query: { limit: BOOKLET_SCAN } }, headers: auth(ctx) }),
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
}

/** POST /booklets: asks the gateway for a booklet. */
export async function requestBooklet({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const form = await readForm(ctx);
  const slipId = single(form.get('payment_slip_id'));
  const urlCallback = single(form.get('url_callback'));
  if (!slipId || !isUuid(slipId)) throw new BadInputError('payment_slip_id', text(ctx, 'booklets.badSlipId'));
  if (!urlCallback) throw new BadInputError('url_callback', text(ctx, 'booklets.badUrl'));
  const answer = ok(
    'POST /api/v1/bank-slip-booklet/{uuid}',
    await deps.api.POST('/api/v1/bank-slip-booklet/{uuid}', {
      params: { path: { uuid: slipId }, header: { 'Idempotency-Key': randomUUID() } },
      headers: auth(ctx),
      body: { url_callback: urlCallback },
    }),
  );
  deps.flash(ctx, 'info', text(ctx, 'booklets.requested', { message: answer.message, url: urlCallback }));
  ctx.redirect('/tenant/booklets');
}

/** GET /booklets/download: streams a booklet's PDF from the gateway. */
export async function downloadBooklet(kit: TenantKit, ctx: ConsoleContext): Promise<void> {
  const link = bookletDownload(await downloadLinkText(kit, ctx), kit.deps.gatewayUrl, formatsFor(localeOf(ctx)).t);
  const response = await kit.download(new Request(link));
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
}

/**
 * The link to download: the `download` of one of the tenant's own booklet.sent events (`?event=`,
 * read with its JWT: another tenant's event is the gateway's 404), or one pasted (`?link=`).
 */
async function downloadLinkText({ deps }: TenantKit, ctx: ConsoleContext): Promise<string | undefined> {
  const eventId = single(ctx.query.event);
  if (eventId === undefined) return single(ctx.query.link);
  if (!EVENT_ID.test(eventId)) throw new NotFoundError(text(ctx, 'callbacks.notFound'));
  const event = ok(
    'GET /api/v1/callbacks/{event_id}',
    await deps.api.GET('/api/v1/callbacks/{event_id}', {
      params: { path: { event_id: eventId } },
      headers: auth(ctx),
    }),
  );
  const link = bookletLink(event);
  if (!link) throw new NotFoundError(text(ctx, 'callback.notBooklet'));
  return link;
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
