import type { Bus } from '@payments/bus';
import {
  callbackUrlPolicy,
  SEARCH_DEFAULT_LIMIT,
  ServiceError,
  Subjects,
  validateReceivablesBatch,
  validateSearchRequest,
  type ProviderAccountVersion,
  type ReceivableCreateItem,
  type SearchRequest,
} from '@payments/contracts';
import { assertBatchSize, uuidParam, type Endpoint } from '../http/endpoint';
import { requestBody } from '../http/json-body';
import { validationError } from '../http/problem';
import type { GatewayContext } from '../http/context';

/**
 * Receivables: create (batch), cancel, search, consult and history. In
 * production a url_callback naming a non-public address or localhost is refused (422) before anything
 * is asked of the bus.
 */
export function receivableEndpoints(bus: Bus, runMode: 'development' | 'production'): Endpoint<unknown>[] {
  const callbackUrls = callbackUrlPolicy(runMode);
  const create: Endpoint<{ receivables: ReceivableCreateItem[]; account: ProviderAccountVersion }> = {
    method: 'post',
    path: '/api/v1/accounts-receivable',
    idempotency: 'required',
    async parse(ctx) {
      const body = requestBody(ctx);
      assertBatchSize(body);
      const result = validateReceivablesBatch(body, callbackUrls);
      if (!result.ok) throw validationError(result.errors);
      return { receivables: result.value, account: providerAccountOf(ctx) };
    },
    charges: ({ receivables }) => receivables.length,
    async handle({ receivables, account }, ctx) {
      const reply = await bus.request(Subjects.receivables.create, {
        tenant_id: ctx.state.tenantId!,
        provider_account: account,
        receivables,
      });
      return { status: 202, body: reply };
    },
  };

  const cancel: Endpoint<string> = {
    method: 'post',
    path: '/api/v1/accounts-receivable/:uuid/cancel',
    idempotency: 'required',
    parse: (ctx) => uuidParam(ctx, 'uuid'),
    async handle(id, ctx) {
      const reply = await bus.request(Subjects.receivables.cancel, {
        tenant_id: ctx.state.tenantId!,
        account_receivable_id: id,
      });
      return { status: 202, body: reply };
    },
  };

  const search: Endpoint<SearchRequest> = {
    method: 'post',
    path: '/api/v1/accounts-receivable/search',
    idempotency: 'optional',
    parse(ctx) {
      const result = validateSearchRequest(requestBody(ctx));
      if (!result.ok) throw validationError(result.errors);
      return result.value;
    },
    async handle(query, ctx) {
      const reply = await bus.request(Subjects.receivables.search, {
        tenant_id: ctx.state.tenantId!,
        query: { state: query.state, start_date: query.start_date, end_date: query.end_date },
        limit: query.limit ?? SEARCH_DEFAULT_LIMIT,
        cursor: query.cursor,
      });
      return {
        status: 200,
        body: reply.items,
        headers: reply.next_cursor ? { 'x-next-cursor': reply.next_cursor } : undefined,
      };
    },
  };

  const consult: Endpoint<string> = {
    method: 'post',
    path: '/api/v1/accounts-receivable/:uuid/consult-transaction',
    idempotency: 'optional',
    parse: (ctx) => uuidParam(ctx, 'uuid'),
    async handle(id, ctx) {
      const reply = await bus.request(Subjects.receivables.consult, {
        tenant_id: ctx.state.tenantId!,
        account_receivable_id: id,
      });
      return { status: 200, body: reply };
    },
  };

  // Its state changes, oldest first; another tenant's id is answered 404 by receivables-svc.
  const history: Endpoint<string> = {
    method: 'get',
    path: '/api/v1/accounts-receivable/:uuid/history',
    idempotency: 'none',
    parse: (ctx) => uuidParam(ctx, 'uuid'),
    async handle(id, ctx) {
      const reply = await bus.request(Subjects.receivables.history, {
        tenant_id: ctx.state.tenantId!,
        account_receivable_id: id,
      });
      return { status: 200, body: reply };
    },
  };

  return [create, search, cancel, consult, history] as Endpoint<unknown>[];
}

/**
 * The tenant's account as the access-token check read it: every charge of the batch is registered with it. Without
 * one (production, until an operator sets it) the batch is refused, before the idempotency key is
 * taken, so the same request succeeds once the account is set.
 */
function providerAccountOf(ctx: GatewayContext): ProviderAccountVersion {
  const tenantId = ctx.state.tenantId!;
  const account = ctx.state.providerAccount;
  if (!account)
    throw new ServiceError(
      'no_provider_account',
      `this tenant has no provider account to register charges with; an operator sets it with: npm run admin -- tenant account --tenant ${tenantId} --provider sandbox|inter|pix --beneficiary-name "<name>" --beneficiary-tax-id <cnpj or cpf> ...`,
    );
  return account;
}
