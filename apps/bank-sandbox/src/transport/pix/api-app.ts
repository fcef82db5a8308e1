import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import type { Logger } from '@payments/logger';
import { planRegistration } from '../../domain/behaviour';
import {
  authorizedClient,
  body,
  certFingerprint,
  dialectApp,
  meter,
  type CallGate,
  type DialectApiDeps,
  type Refusals,
} from '../inter/call-gate';
import type { InterEndpoint } from '../../domain/inter/call-meter';
import { TOKEN_TTL_SECONDS, type InterBank } from '../../domain/inter/inter-bank';
import { cents } from '../../domain/pix/amount-due';
import type { CobvRequest, CobvRow } from '../../db/pix';
import type { CobvRevision, PixBank } from '../../domain/pix/pix-bank';
import {
  accessDenied,
  internalError,
  invalid,
  notFound,
  PixApiError,
  tooManyRequests,
  unauthorized,
  unavailable,
} from '../../domain/pix/problems';
import { checked } from './standard';
import { cobvView, pixView, receiverView, refundView } from '../../domain/pix/wire';
import type { SandboxBank } from '../../domain/inter/terms';

/** The two dialects the PIX API is served in, by path: the standard's and Inter's. */
export const PIX_DIALECT_ROOTS = { standard: '/pix/v2', inter: '/inter/pix/v2' } as const;
export type PixDialectName = keyof typeof PIX_DIALECT_ROOTS;
/** The standard dialect's token endpoint (Inter's dialect uses Inter's own, /inter/oauth/v2/token). */
export const PIX_TOKEN_PATH = '/pix/oauth/token';
/** The scopes a token is given when its request names none. */
export const PIX_SCOPES = 'cobv.write cobv.read pix.read pix.write webhook.read webhook.write';

/** Whether a request path on the mutual TLS port is the PIX API's (else it is Inter's Cobrança API). */
export function isPixPath(path: string): boolean {
  return path === PIX_TOKEN_PATH || path.startsWith('/pix/') || path.startsWith('/inter/pix/');
}

export interface PixApiDeps extends DialectApiDeps {
  pix: PixBank;
  /** The Inter dialect's ledger: integrations, tokens and the faults in force. */
  inter: InterBank;
  bank: SandboxBank;
}

interface PixState {
  clientId: string;
  dialect: PixDialectName;
}

const TXID = /^[a-zA-Z0-9]{26,35}$/;
const E2E = /^[a-zA-Z0-9]{32}$/;
const REFUND_ID = /^[a-zA-Z0-9]{1,35}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The Central Bank's PIX API (cobv, webhook, PIX received, devoluções) over mutual TLS, in two dialects
 * on the same integrations: the standard's under /pix/v2 (token at /pix/oauth/token) and Inter's under
 * /inter/pix/v2 (token at Inter's /inter/oauth/v2/token; x-conta-corrente honoured; PUT /webhook
 * answers 204). Requests are checked against the standard's schemas; errors are its `Problema`.
 */
export function createPixApiApp(deps: PixApiDeps): Koa {
  const app = dialectApp(errorHandler(deps.logger), deps.behaviour, unavailable);
  const router = new Router();
  mountToken(router, deps);
  for (const dialect of Object.keys(PIX_DIALECT_ROOTS) as PixDialectName[]) {
    const routes = new Router({ prefix: PIX_DIALECT_ROOTS[dialect] });
    mountCobv(routes, deps, dialect);
    mountWebhook(routes, deps, dialect);
    mountReceived(routes, deps, dialect);
    router.use(routes.routes(), routes.allowedMethods());
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

// --- token -------------------------------------------------------------------------------------------

/** OAuth2 client credentials (RFC 6749 4.4): credentials in the form or HTTP Basic, over the integration's certificate. */
function mountToken(router: Router, deps: PixApiDeps): void {
  router.post(PIX_TOKEN_PATH, async (ctx) => {
    const form = formOf(ctx);
    const basic = basicCredentials(ctx.get('authorization'));
    const clientId = basic?.id ?? form.client_id;
    const secret = basic?.secret ?? form.client_secret;
    if (!ctx.is('application/x-www-form-urlencoded') || form.grant_type === undefined)
      return oauthError(
        ctx,
        400,
        'invalid_request',
        'a form (application/x-www-form-urlencoded) with grant_type is required',
      );
    if (form.grant_type !== 'client_credentials')
      return oauthError(ctx, 400, 'unsupported_grant_type', 'only client_credentials is granted');
    if (!clientId || !secret) return oauthError(ctx, 401, 'invalid_client', 'client_id and client_secret are required');
    meter(gate(deps), clientId, 'token');
    const client = await deps.inter.checkSecret(clientId, secret);
    const fingerprint = certFingerprint(ctx, refusals);
    if (!client || (client.cert_fingerprint !== null && client.cert_fingerprint !== fingerprint))
      return oauthError(ctx, 401, 'invalid_client', 'unknown client, wrong secret or another certificate');
    const scopes = (form.scope ?? PIX_SCOPES).split(' ').filter(Boolean);
    const token = await deps.inter.issueToken(clientId, fingerprint, scopes);
    ctx.body = { access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS, scope: scopes.join(' ') };
  });
}

function formOf(ctx: Context): Record<string, string | undefined> {
  const value = body(ctx);
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]),
  );
}

function basicCredentials(header: string): { id: string; secret: string } | null {
  const encoded = /^Basic (\S+)$/i.exec(header)?.[1];
  if (!encoded) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
}

function oauthError(ctx: Context, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.body = { error, error_description: description };
}

// --- cobv -------------------------------------------------------------------------------------------

function mountCobv(router: Router, deps: PixApiDeps, dialect: PixDialectName): void {
  const { pix } = deps;
  router.put('/cobv/:txid', authorized(deps, dialect, 'cobv.write', 'cobv_put'), async (ctx) => {
    const txid = ctx.params.txid;
    if (!TXID.test(txid))
      throw invalid('CobVOperacaoInvalida', [
        { propriedade: 'txid', razao: 'o txid deve ter de 26 a 35 letras ou dígitos', valor: txid },
      ]);
    const request = checked<CobvRequest>('CobVSolicitada', 'CobVOperacaoInvalida', body(ctx));
    // The sandbox's behaviour (mode, or a marker in the devedor's name) as for the other dialects' creates.
    const plan = planRegistration(deps.behaviour.mode, request.devedor?.nome ?? '');
    if (plan.outcome === 'fail') throw unavailable();
    if (plan.outcome === 'reject')
      throw invalid('CobVOperacaoInvalida', [
        { propriedade: 'cobv.devedor.nome', razao: 'recusada (sandbox behaviour "reject")' },
      ]);
    const result = await pix.put(state(ctx).clientId, txid, request);
    // Stored first, answered late (Inter's slow_once_ms, or slow): a client that gives up has a cobv it did not hear of.
    const slowOnce = deps.inter.behaviour.slowOnceMs;
    deps.inter.behaviour.slowOnceMs = 0;
    const delay = Math.max(slowOnce, plan.slow ? deps.slowMs : 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    ctx.status = 201;
    ctx.body = await view(deps, result.row);
  });

  router.patch('/cobv/:txid', authorized(deps, dialect, 'cobv.write', 'cobv_patch'), async (ctx) => {
    const revision = checked<CobvRevision>('CobVRevisada', 'CobVOperacaoInvalida', body(ctx));
    const row = await pix.patch(state(ctx).clientId, ctx.params.txid, revision);
    if (!row) throw cobvNotFound();
    ctx.body = await view(deps, row);
  });

  router.get('/cobv/:txid', authorized(deps, dialect, 'cobv.read', 'cobv_get'), async (ctx) => {
    const row = await pix.find(state(ctx).clientId, ctx.params.txid);
    if (!row) throw cobvNotFound();
    // A PSP may take a while to show a cobv it just created (fault consult_not_found_ms).
    const hiddenMs = deps.inter.faults.consult_not_found_ms;
    if (hiddenMs > 0 && Date.now() - row.created_at.getTime() < hiddenMs) throw cobvNotFound();
    const asked = ctx.query.revisao;
    let revision = row.revision;
    if (asked !== undefined) {
      revision = Number(asked);
      if (typeof asked !== 'string' || !/^\d+$/.test(asked) || revision > row.revision)
        throw invalid('CobVConsultaInvalida', [
          { propriedade: 'revisao', razao: 'revisão inexistente para esta cobrança', valor: String(asked) },
        ]);
    }
    ctx.body = await view(deps, row, revision);
  });

  router.get('/cobv', authorized(deps, dialect, 'cobv.read', 'cobv_list'), async (ctx) => {
    const query = listQuery(ctx, 'CobVConsultaInvalida');
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : undefined;
    const { rows, total } = await pix.list(state(ctx).clientId, { ...query, status });
    const context = await contextOf(
      deps,
      state(ctx).clientId,
      rows.map((r) => r.txid),
    );
    ctx.body = {
      parametros: {
        inicio: query.inicio,
        fim: query.fim,
        ...(status ? { status } : {}),
        paginacao: pagination(query, total),
      },
      cobs: rows.map((row) => cobvView(row, context)),
    };
  });
}

const cobvNotFound = () =>
  notFound('CobVNaoEncontrada', 'Cobrança com vencimento não encontrada para o txid informado.');

async function contextOf(deps: PixApiDeps, clientId: string, txids: string[]) {
  const [holder, payments] = await Promise.all([deps.pix.holder(clientId), deps.pix.paymentsOf(txids)]);
  return { receiver: receiverView(deps.bank, holder), ...payments };
}

async function view(deps: PixApiDeps, row: CobvRow, revision?: number) {
  return cobvView(row, await contextOf(deps, row.client_id, [row.txid]), revision);
}

// --- webhook ----------------------------------------------------------------------------------------

function mountWebhook(router: Router, deps: PixApiDeps, dialect: PixDialectName): void {
  const { pix } = deps;
  router.put('/webhook/:chave', authorized(deps, dialect, 'webhook.write', 'pix_webhook_put'), async (ctx) => {
    await ownKey(deps, ctx, 'WebhookOperacaoInvalida');
    const request = checked<{ webhookUrl: string }>('WebhookSolicitado', 'WebhookOperacaoInvalida', body(ctx));
    if (!request.webhookUrl.startsWith('https://') && !(deps.httpWebhooks && request.webhookUrl.startsWith('http://')))
      throw invalid('WebhookOperacaoInvalida', [
        { propriedade: 'webhookUrl', razao: 'a URL do webhook deve ser https', valor: request.webhookUrl },
      ]);
    await pix.setWebhook(state(ctx).clientId, ctx.params.chave, request.webhookUrl);
    // The standard answers 200; Inter's reference answers 204.
    ctx.status = dialect === 'inter' ? 204 : 200;
    if (dialect === 'standard') ctx.body = '';
  });
  router.get('/webhook/:chave', authorized(deps, dialect, 'webhook.read', 'pix_webhook_get'), async (ctx) => {
    const webhook = await pix.webhook(state(ctx).clientId, ctx.params.chave);
    if (!webhook) throw webhookNotFound();
    ctx.body = { webhookUrl: webhook.webhook_url, chave: webhook.chave, criacao: webhook.created_at.toISOString() };
  });
  router.delete('/webhook/:chave', authorized(deps, dialect, 'webhook.write', 'pix_webhook_delete'), async (ctx) => {
    if (!(await pix.deleteWebhook(state(ctx).clientId, ctx.params.chave))) throw webhookNotFound();
    ctx.status = 204;
  });
}

const webhookNotFound = () =>
  notFound('WebhookNaoEncontrado', 'O webhook denotado por {chave} não encontra-se estabelecido.');

/** The chave of the path must be the integration's own PIX key. */
async function ownKey(deps: PixApiDeps, ctx: Context, errorType: string): Promise<void> {
  const holder = await deps.pix.holder(state(ctx).clientId);
  if (holder.pix_key === null || holder.pix_key !== ctx.params.chave)
    throw invalid(errorType, [
      {
        propriedade: 'chave',
        razao: 'o parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário recebedor.',
        valor: ctx.params.chave,
      },
    ]);
}

// --- PIX received and devoluções ----------------------------------------------------------------------

function mountReceived(router: Router, deps: PixApiDeps, dialect: PixDialectName): void {
  const { pix } = deps;
  router.get('/pix', authorized(deps, dialect, 'pix.read', 'pix_list'), async (ctx) => {
    const query = listQuery(ctx, 'PixConsultaInvalida');
    // The standard names the filter txid; Inter's reference names it txId.
    const filter = ctx.query[dialect === 'inter' ? 'txId' : 'txid'];
    const txid = typeof filter === 'string' && filter !== '' ? filter : undefined;
    const { rows, total } = await pix.receivedList(state(ctx).clientId, { ...query, txid });
    const refunds = await pix.refundsOf(rows.map((r) => r.end_to_end_id));
    ctx.body = {
      parametros: {
        inicio: query.inicio,
        fim: query.fim,
        ...(txid ? { txid } : {}),
        paginacao: pagination(query, total),
      },
      pix: rows.map((row) => pixView(row, refunds)),
    };
  });

  router.get('/pix/:e2eid', authorized(deps, dialect, 'pix.read', 'pix_get'), async (ctx) => {
    const received = await pix.received(state(ctx).clientId, ctx.params.e2eid);
    if (!received) throw pixNotFound();
    ctx.body = pixView(received, await pix.refundsOf([received.end_to_end_id]));
  });

  router.put('/pix/:e2eid/devolucao/:id', authorized(deps, dialect, 'pix.write', 'refund_put'), async (ctx) => {
    const { e2eid, id } = ctx.params;
    if (!E2E.test(e2eid)) throw pixNotFound();
    if (!REFUND_ID.test(id))
      throw invalid('PixDevolucaoInvalida', [
        { propriedade: 'id', razao: 'o id deve ter de 1 a 35 letras ou dígitos', valor: id },
      ]);
    const request = checked<{ valor: string; natureza?: string; descricao?: string }>(
      'DevolucaoSolicitada',
      'PixDevolucaoInvalida',
      body(ctx),
    );
    const result = await pix.refund(state(ctx).clientId, e2eid, {
      id,
      amountCents: cents(request.valor),
      natureza: request.natureza,
      descricao: request.descricao,
    });
    if (result.outcome === 'not_found') throw pixNotFound();
    if (result.outcome === 'refused')
      throw invalid('PixDevolucaoInvalida', [{ propriedade: 'devolucao', razao: result.reason }]);
    ctx.status = 201;
    ctx.body = refundView(result.refund);
  });

  router.get('/pix/:e2eid/devolucao/:id', authorized(deps, dialect, 'pix.read', 'refund_get'), async (ctx) => {
    const refund = await pix.refundOf(state(ctx).clientId, ctx.params.e2eid, ctx.params.id);
    if (!refund) throw notFound('PixDevolucaoNaoEncontrada', 'Devolução não encontrada para o e2eid informado.');
    ctx.body = refundView(refund);
  });
}

const pixNotFound = () => notFound('PixNaoEncontrado', 'Pix não encontrado para o e2eid informado.');

// --- lists --------------------------------------------------------------------------------------------

interface ListQuery {
  inicio: string;
  fim: string;
  from: Date;
  to: Date;
  page: number;
  size: number;
}

/** inicio and fim (RFC 3339, fim not before inicio), paginacao.paginaAtual (0 first) and itensPorPagina (1 to 1000, 100). */
function listQuery(ctx: Context, errorType: string): ListQuery {
  const text = (name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);
  const violations = [];
  const [inicio, fim] = [text('inicio'), text('fim')];
  for (const [name, value] of [
    ['inicio', inicio],
    ['fim', fim],
  ] as const)
    if (!value || !RFC3339.test(value) || Number.isNaN(Date.parse(value)))
      violations.push({
        propriedade: name,
        razao: 'deve ser um timestamp RFC 3339',
        ...(value ? { valor: value } : {}),
      });
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const value = text(name);
    if (value === undefined) return fallback;
    const number = Number(value);
    if (!/^-?\d+$/.test(value) || number < min || number > max) {
      violations.push({ propriedade: name, razao: `deve ser um inteiro de ${min} a ${max}`, valor: value });
      return fallback;
    }
    return number;
  };
  const page = integer('paginacao.paginaAtual', 0, 0, 1_000_000);
  const size = integer('paginacao.itensPorPagina', 100, 1, 1000);
  if (text('cpf') !== undefined && text('cnpj') !== undefined)
    violations.push({ propriedade: 'cpf', razao: 'ambos os parâmetros cpf e cnpj estão preenchidos' });
  if (violations.length === 0 && inicio && fim && Date.parse(fim) < Date.parse(inicio))
    violations.push({ propriedade: 'fim', razao: 'o timestamp fim é anterior ao timestamp inicio', valor: fim });
  if (violations.length > 0 || !inicio || !fim) throw invalid(errorType, violations);
  return { inicio, fim, from: new Date(inicio), to: new Date(fim), page, size };
}

function pagination(query: ListQuery, total: number) {
  return {
    paginaAtual: query.page,
    itensPorPagina: query.size,
    quantidadeDePaginas: Math.max(1, Math.ceil(total / query.size)),
    quantidadeTotalDeItens: total,
  };
}

// --- authorization, metering, errors -------------------------------------------------------------------

/**
 * Bearer token of this client certificate with the scope the operation needs (in Inter's dialect, for
 * the account named by x-conta-corrente when sent); then the call is counted against the limit in force.
 */
function authorized(deps: PixApiDeps, dialect: PixDialectName, scope: string, endpoint: InterEndpoint) {
  return async (ctx: Context, next: Next) => {
    const client = await authorizedClient(ctx, gate(deps), scope, endpoint, dialect === 'inter');
    (ctx.state as { pix?: PixState }).pix = { clientId: client.clientId, dialect };
    await next();
  };
}

/** The standard's refusals (Problema) of a call on its tokens, certificates and limits. */
const refusals: Refusals = { unauthorized, accessDenied, tooManyRequests };

function gate(deps: PixApiDeps): CallGate {
  return { bank: deps.inter, meter: deps.meter, enforceLimits: deps.enforceLimits, refusals };
}

function state(ctx: Context): PixState {
  const pix = (ctx.state as { pix?: PixState }).pix;
  if (!pix) throw new Error('route without authorized()');
  return pix;
}

function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw notFound('NaoEncontrado', `Entidade não encontrada: ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const failure = toPixError(err);
      if (failure.status === 500) logger.error({ err, path: ctx.path }, 'pix api request failed');
      ctx.status = failure.status;
      ctx.set(failure.headers);
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify(failure.problem());
    }
  };
}

function toPixError(err: unknown): PixApiError {
  if (err instanceof PixApiError) return err;
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return invalid('RequisicaoInvalida', [{ razao: (err as Error).message }]);
  return internalError();
}
