import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import type { TSchema } from '@sinclair/typebox';
import type { Logger } from '@payments/logger';
import { planRegistration } from '../../domain/behaviour';
import { renderChargePdf } from '../../domain/slip-pdf';
import {
  authorizedClient,
  body,
  certFingerprint,
  dialectApp,
  meter,
  type CallGate,
  type DialectApiDeps,
  type Refusals,
} from './call-gate';
import type { InterEndpoint } from '../../domain/inter/call-meter';
import {
  CallbacksQuery,
  CancelarCobrancaRequestBody,
  EmitirCobrancaRequestBody,
  ListarCobrancasQuery,
  PagamentoCobrancaRequestBody,
  RetryCallbacksRequestBody,
  SCOPES,
  TokenRequest,
  WebhookSolicitado,
  WebhookSolicitadoDevelopment,
  type CobrancasResponse,
  type EmitirCobrancaAsyncResponse,
  type PdfResponse,
  type Problema,
  type RetryCallbackResponse,
  type TokenResponse,
  type Violacao,
  type WebhookCompleto,
} from '../../domain/inter/contract';
import { TOKEN_TTL_SECONDS, type InterBank } from '../../domain/inter/inter-bank';
import { createRefusals } from '../../domain/inter/rules';
import { chargeForPdf } from '../../domain/inter/terms';
import { violations } from './validate';
import { chargeView, listItem } from '../../domain/inter/wire';

/** Every path of the dialect is under this prefix: an account's base_url is https://host:port/inter. */
export const INTER_PREFIX = '/inter';

export interface InterApiDeps extends DialectApiDeps {
  bank: InterBank;
}

/** An Inter refusal (Problema): `{ title, status, detail, timestamp, violacoes? }`, with headers when any. */
export class InterApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly violacoes: Violacao[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

/** The reference's examples of each refusal (components.examples). */
const invalid = (violacoes: Violacao[]) =>
  new InterApiError(
    400,
    'Dados inválidos.',
    'Verifique se os dados informados estão de acordo com a documentação disponibilizada e tente novamente.',
    violacoes,
  );
const accessDenied = () =>
  new InterApiError(
    403,
    'Acesso Negado',
    'Requisição de participante autenticado que viola alguma regra de autorização.',
  );
const notFound = (detail = 'Entidade não encontrada.') => new InterApiError(404, 'Não Encontrado', detail);
const unavailable = () =>
  new InterApiError(
    503,
    'Serviço Indisponível',
    'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
  );

interface InterState {
  clientId: string;
  scopes: string[];
  account: string;
}

/**
 * The Inter Cobrança v3 dialect of the bank sandbox (served over mutual TLS): OAuth2 client
 * credentials, create/consult/list/cancel/pdf of "boleto com Pix" charges, the webhook, its callback
 * history and retry, with Inter's paths, field names, status codes and error bodies (./contract.ts).
 * A token acts only for its client, over the certificate it was issued over, within its scopes and,
 * when x-conta-corrente is sent, for its own account. Every call is counted per integration and
 * endpoint, and refused with 429 beyond the limit in force.
 */
export function createInterApiApp(deps: InterApiDeps): Koa {
  const app = dialectApp(errorHandler(deps.logger), deps.behaviour, unavailable);
  const router = new Router({ prefix: INTER_PREFIX });
  mountToken(router, deps);
  mountWebhook(router, deps);
  mountCharges(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function mountToken(router: Router, deps: InterApiDeps): void {
  const { bank } = deps;
  router.post('/oauth/v2/token', async (ctx) => {
    if (!ctx.is('application/x-www-form-urlencoded'))
      throw invalid([{ razao: 'o pedido de token é application/x-www-form-urlencoded' }]);
    const request = checked(TokenRequest, body(ctx));
    meter(gate(deps), request.client_id, 'token');
    const client = await bank.checkSecret(request.client_id, request.client_secret);
    const fingerprint = certFingerprint(ctx, refusals);
    // An integration's token is issued only over its own certificate, as Inter binds the two. The
    // reference's token endpoint answers 400, 403, 404 or 503: wrong credentials are its 403.
    if (!client || (client.cert_fingerprint !== null && client.cert_fingerprint !== fingerprint)) throw accessDenied();
    const scopes = request.scope.split(' ').filter(Boolean);
    const token = await bank.issueToken(request.client_id, fingerprint, scopes);
    const answer: TokenResponse = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: TOKEN_TTL_SECONDS,
      scope: scopes.join(' '),
    };
    ctx.body = answer;
  });
}

function mountWebhook(router: Router, deps: InterApiDeps): void {
  const { bank } = deps;
  const webhookPaths = ['/cobranca/v3/cobrancas/webhook'];
  router.put(webhookPaths, authorized(deps, SCOPES.write, 'webhook_put'), async (ctx) => {
    const request = checked(deps.httpWebhooks ? WebhookSolicitadoDevelopment : WebhookSolicitado, body(ctx));
    await bank.setWebhook(state(ctx).clientId, request.webhookUrl);
    ctx.status = 204;
  });
  router.get(webhookPaths, authorized(deps, SCOPES.read, 'webhook_get'), async (ctx) => {
    const client = await bank.client(state(ctx).clientId);
    if (!client.webhook_url || !client.webhook_created_at) throw notFound('Webhook não encontrado.');
    const answer: WebhookCompleto = {
      webhookUrl: client.webhook_url,
      criacao: client.webhook_created_at.toISOString(),
      ...(client.webhook_updated_at ? { atualizacao: client.webhook_updated_at.toISOString() } : {}),
    };
    ctx.body = answer;
  });
  router.delete(webhookPaths, authorized(deps, SCOPES.write, 'webhook_delete'), async (ctx) => {
    const client = await bank.client(state(ctx).clientId);
    if (!client.webhook_url) throw notFound('Webhook não encontrado.');
    await bank.setWebhook(client.client_id, null);
    ctx.status = 204;
  });

  router.get('/cobranca/v3/cobrancas/webhook/callbacks', authorized(deps, SCOPES.read, 'callbacks'), async (ctx) => {
    const query = checked(CallbacksQuery, { ...ctx.query }, { query: true });
    ctx.body = await bank.callbacks(state(ctx).clientId, query);
  });
  // The reference names the path /webhook/callbacks/retry and shows it under /cobrancas: both answer.
  router.post(
    ['/cobranca/v3/cobrancas/webhook/callbacks/retry', '/cobranca/v3/webhook/callbacks/retry'],
    authorized(deps, SCOPES.write, 'callbacks_retry'),
    async (ctx) => {
      if (body(ctx) === undefined) throw invalid([{ razao: 'Required Body [body] not specified.' }]);
      const request = checked(RetryCallbacksRequestBody, body(ctx));
      const foundIds = await bank.retryCallbacks(state(ctx).clientId, request.codigoSolicitacao);
      if (foundIds.length === 0) throw notFound('Nenhuma cobrança encontrada para os códigos informados.');
      const answer: RetryCallbackResponse = { foundIds };
      ctx.body = answer;
    },
  );
}

function mountCharges(router: Router, deps: InterApiDeps): void {
  const { bank } = deps;
  router.post('/cobranca/v3/cobrancas', authorized(deps, SCOPES.write, 'create'), async (ctx) => {
    const request = checked(EmitirCobrancaRequestBody, body(ctx));
    const refusals = createRefusals(request);
    if (refusals.length > 0) throw invalid(refusals);
    const plan = planRegistration(deps.behaviour.mode, request.pagador.nome);
    if (plan.outcome === 'fail') throw unavailable();
    if (plan.outcome === 'reject')
      throw invalid([{ propriedade: 'pagador.nome', razao: 'recusada (sandbox behaviour "reject")' }]);
    const created = await bank.create(state(ctx).clientId, request);
    if (created.outcome === 'duplicate')
      // The reference's duplicate control: no second charge with these fields within 30 minutes.
      throw new InterApiError(
        400,
        'Dados inválidos.',
        'Não é possível emitir mais de uma cobrança com os mesmos seuNumero, valorNominal, dataVencimento e cpfCnpj do pagador em um intervalo de 30 minutos.',
      );
    // Stored first, answered late: a client that gives up in the meantime has a charge it did not hear of.
    const slowOnce = bank.behaviour.slowOnceMs;
    bank.behaviour.slowOnceMs = 0;
    const delay = Math.max(slowOnce, plan.slow ? deps.slowMs : 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const answer: EmitirCobrancaAsyncResponse = { codigoSolicitacao: created.charge.codigo_solicitacao };
    ctx.body = answer;
  });

  router.get('/cobranca/v3/cobrancas', authorized(deps, SCOPES.read, 'list'), async (ctx) => {
    const query = checked(ListarCobrancasQuery, { ...ctx.query }, { query: true });
    const { rows, total } = await bank.list(state(ctx).clientId, query);
    const size = query['paginacao.itensPorPagina'] ?? 100;
    const page = query['paginacao.paginaAtual'] ?? 0;
    const pages = Math.max(1, Math.ceil(total / size));
    const answer: CobrancasResponse = {
      totalPaginas: pages,
      totalElementos: total,
      tamanhoPagina: size,
      primeiraPagina: page === 0,
      ultimaPagina: page >= pages - 1,
      numeroDeElementos: rows.length,
      cobrancas: rows.map((row) => listItem(row)),
    };
    ctx.body = answer;
  });

  router.get('/cobranca/v3/cobrancas/:codigoSolicitacao', authorized(deps, SCOPES.read, 'consult'), async (ctx) => {
    const row = await found(deps, ctx);
    // Inter issues asynchronously: just after the create a consult may not find the charge yet (fault).
    const hiddenMs = bank.faults.consult_not_found_ms;
    if (hiddenMs > 0 && Date.now() - row.created_at.getTime() < hiddenMs) throw notFound();
    ctx.body = chargeView(row);
  });

  router.post(
    '/cobranca/v3/cobrancas/:codigoSolicitacao/cancelar',
    authorized(deps, SCOPES.write, 'cancel'),
    async (ctx) => {
      const request = checked(CancelarCobrancaRequestBody, body(ctx));
      const result = await bank.cancel(state(ctx).clientId, ctx.params.codigoSolicitacao, request.motivoCancelamento);
      if (result.outcome === 'not_found') throw notFound();
      if (result.outcome === 'not_open')
        throw invalid([
          {
            propriedade: 'codigoSolicitacao',
            razao: `a cobrança está ${chargeView(result.charge).cobranca.situacao} e não pode ser cancelada`,
            valor: ctx.params.codigoSolicitacao,
          },
        ]);
      ctx.status = 202;
      ctx.body = ''; // no content, but 202 (koa would write "Accepted")
    },
  );

  router.get('/cobranca/v3/cobrancas/:codigoSolicitacao/pdf', authorized(deps, SCOPES.read, 'pdf'), async (ctx) => {
    const row = await found(deps, ctx);
    if (!row.nosso_numero)
      throw invalid([{ propriedade: 'codigoSolicitacao', razao: `a cobrança está ${row.situacao}: sem boleto` }]);
    const { payee } = await bank.pdfParts(row);
    const pdf = await renderChargePdf(chargeForPdf(row), payee);
    const answer: PdfResponse = { pdf: pdf.toString('base64') };
    ctx.body = answer;
  });

  // Inter's own sandbox pays a charge through the API ("Exclusivo para o ambiente Sandbox").
  router.post('/cobranca/v3/cobrancas/:codigoSolicitacao/pagar', authorized(deps, SCOPES.write, 'pay'), async (ctx) => {
    const request = checked(PagamentoCobrancaRequestBody, body(ctx));
    const row = await found(deps, ctx);
    const result = await bank.pay(row.codigo_solicitacao, request.pagarCom === 'PIX' ? 'pix' : 'boleto', null);
    if (result.outcome !== 'paid')
      throw invalid([{ propriedade: 'codigoSolicitacao', razao: 'a cobrança não está em aberto' }]);
    ctx.status = 204;
  });
}

async function found(deps: InterApiDeps, ctx: Context) {
  const row = await deps.bank.find(state(ctx).clientId, ctx.params.codigoSolicitacao);
  if (!row) throw notFound();
  return row;
}

/** Inter's refusals of a call on its tokens, certificates and limits. */
const refusals: Refusals = {
  unauthorized: (detail) => new InterApiError(401, 'Não Autorizado', detail),
  accessDenied,
  tooManyRequests: (limit, retryAfterSeconds) =>
    new InterApiError(429, 'Too Many Requests', `limite de ${limit} chamadas por minuto excedido`, [], {
      'retry-after': String(retryAfterSeconds),
    }),
};

function gate(deps: InterApiDeps): CallGate {
  return { bank: deps.bank, meter: deps.meter, enforceLimits: deps.enforceLimits, refusals };
}

/**
 * Bearer token of this client certificate, with the scope the operation needs, for the account named
 * by x-conta-corrente (when sent); then the call is counted against the endpoint's limit.
 */
function authorized(deps: InterApiDeps, scope: string, endpoint: InterEndpoint) {
  return async (ctx: Context, next: Next) => {
    (ctx.state as { inter?: InterState }).inter = await authorizedClient(ctx, gate(deps), scope, endpoint, true);
    await next();
  };
}

function state(ctx: Context): InterState {
  const inter = (ctx.state as { inter?: InterState }).inter;
  if (!inter) throw new Error('route without authorized()');
  return inter;
}

/** `value` typed by `schema`, or 400 naming each violation in Inter's words. */
function checked<S extends TSchema>(schema: S, value: unknown, options = { query: false }): S['static'] {
  const found = violations(schema, value, options);
  if (found.length > 0) throw invalid(found);
  return value as S['static'];
}

function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound(`no route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const failure = toInterError(err);
      if (failure.status === 500) logger.error({ err, path: ctx.path }, 'inter dialect request failed');
      const answer: Problema = {
        title: failure.title,
        status: failure.status,
        detail: failure.detail,
        timestamp: new Date().toISOString(),
        ...(failure.violacoes.length > 0 ? { violacoes: failure.violacoes } : {}),
      };
      ctx.status = failure.status;
      ctx.set(failure.headers);
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify(answer);
    }
  };
}

function toInterError(err: unknown): InterApiError {
  if (err instanceof InterApiError) return err;
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) return invalid([{ razao: (err as Error).message }]);
  return new InterApiError(500, 'Erro Interno', 'Ocorreu um erro não esperado. Tente novamente mais tarde.');
}
