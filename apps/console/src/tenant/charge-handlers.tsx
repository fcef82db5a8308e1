/** @jsxRuntime automatic @jsxImportSource preact */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { isUuid } from '@payments/contracts';
import { ok } from '../gateway/public-api';
import { asProblem, GatewayError } from '../gateway/problem';
import type { ConsoleContext } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { single } from '../http/form';
import { tenantSession } from '../session/guards';
import { render } from '../views/render';
import { auth, CHARGE_CALLBACKS, page, PAGE_SIZE, text, type TenantKit } from './handler-kit';
import { ChargePage, type SlipOffer } from './pages/charge';
import { ChargesPage } from './pages/charges';
import { gatewaySlipLink, webLink, type SlipLinkKind } from './payment-data';
import { chargeFilters, exportChargesCsv, searchCharges } from './charge-search';

/** GET /charges: the search. */
export async function chargesPage({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const filters = chargeFilters(ctx);
  const jwt = tenantSession(ctx).jwt;
  const { items, next } = await searchCharges(deps.api, jwt, filters, PAGE_SIZE, single(ctx.query.cursor));
  render(ctx, <ChargesPage {...page(ctx)} filters={filters} items={items} next={next} />);
}

/** GET /charges.csv: every charge the filters select, paged through the API's cursor. */
export async function chargesCsv({ deps }: TenantKit, ctx: ConsoleContext): Promise<void> {
  const filters = chargeFilters(ctx);
  const jwt = tenantSession(ctx).jwt;
  await exportChargesCsv(
    ctx,
    filters,
    (cursor, limit) => searchCharges(deps.api, jwt, filters, limit, cursor),
    (err) => deps.logger.error({ err }, 'charges CSV: the search failed after the download began; cut short'),
  );
}

/** GET /charges/lookup: to the charge page of the id typed in. */
export function chargeLookup(ctx: ConsoleContext): void {
  const id = single(ctx.query.id);
  if (!id || !isUuid(id)) throw new BadInputError('id', text(ctx, 'charge.badId'));
  ctx.redirect(`/tenant/charges/${id.toLowerCase()}`);
}

/** GET /charges/:id: the charge, as issued and as it is now, with its history and callbacks. */
export async function chargePage(kit: TenantKit, ctx: ConsoleContext): Promise<void> {
  const { api } = kit.deps;
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
    registeredPaymentData(kit, ctx, id),
  ]);
  render(
    ctx,
    <ChargePage
      {...page(ctx)}
      charge={charge}
      paymentData={paymentData}
      dueDate={issued.due_date}
      payerTaxId={issued.payer.tax_id}
      pdf={slipOffer(kit, id, 'pdf', paymentData?.pdf)}
      qrCode={slipOffer(kit, id, 'qrcode', paymentData?.qrcode_image)}
      history={history.items}
      callbacks={callbacks}
    />,
  );
}

/** Where the charge page offers a slip file: through the console for the gateway's links, else at the bank. */
function slipOffer({ deps }: TenantKit, id: string, kind: SlipLinkKind, link: string | undefined): SlipOffer {
  if (!link) return undefined;
  if (gatewaySlipLink(link, kind, deps.gatewayUrl))
    return { via: 'console', href: `/tenant/charges/${id}/${kind === 'pdf' ? 'slip.pdf' : 'qrcode.png'}` };
  const atBank = webLink(link);
  return atBank ? { via: 'bank', href: atBank } : undefined;
}

/** The charge id of the path, or the not-found page. */
function chargeId(ctx: ConsoleContext): string {
  const id = ctx.params.id ?? '';
  if (!isUuid(id)) throw new NotFoundError(text(ctx, 'charge.notFound'));
  return id;
}

/** GET .../payment-data, or undefined while the bank has not registered the charge (its 404). */
async function registeredPaymentData({ deps }: TenantKit, ctx: ConsoleContext, id: string) {
  const result = await deps.api.GET('/api/v1/accounts-receivable/{uuid}/payment-data', {
    params: { path: { uuid: id } },
    headers: auth(ctx),
  });
  if (result.response.status === 404) return undefined;
  return ok('GET /api/v1/accounts-receivable/{uuid}/payment-data', result);
}

/**
 * GET /charges/:id/slip.pdf and /charges/:id/qrcode.png. Reads the charge's payment data with the
 * tenant's JWT (another tenant's charge is the gateway's 404), takes its link only when it is this
 * gateway's signed slip link, and streams the file. The browser names no link: the console fetches
 * nothing it did not read from the gateway itself.
 */
export async function slipFile(kit: TenantKit, ctx: ConsoleContext, kind: SlipLinkKind): Promise<void> {
  const id = chargeId(ctx);
  const data = await registeredPaymentData(kit, ctx, id);
  const what = kind === 'pdf' ? 'PDF' : 'QR code';
  const link = data && gatewaySlipLink(kind === 'pdf' ? data.pdf : data.qrcode_image, kind, kit.deps.gatewayUrl);
  if (!link) throw new NotFoundError(text(ctx, 'charge.noGatewayLink', { what }));
  const response = await kit.download(new Request(link));
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
