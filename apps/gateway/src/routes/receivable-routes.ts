import type { Bus } from '@payments/bus';
import {
  SEARCH_DEFAULT_LIMIT,
  Subjects,
  validateReceivablesBatch,
  validateSearchRequest,
  type ReceivableCreateItem,
  type SearchRequest,
} from '@payments/contracts';
import { assertBatchSize, uuidParam, type Endpoint } from '../http/endpoint';
import { requestBody } from '../http/json-body';
import { validationError } from '../http/problem';

/** Receivables: create (batch), cancel, search, consult (spec 4.7-4.10). */
export function receivableEndpoints(bus: Bus): Endpoint<unknown>[] {
  const create: Endpoint<ReceivableCreateItem[]> = {
    method: 'post',
    path: '/api/v1/accounts-receivable',
    idempotency: 'required',
    parse(ctx) {
      const body = requestBody(ctx);
      assertBatchSize(body);
      const result = validateReceivablesBatch(body);
      if (!result.ok) throw validationError(result.errors);
      return result.value;
    },
    async handle(receivables, ctx) {
      const reply = await bus.request(Subjects.receivables.create, { tenant_id: ctx.state.tenantId!, receivables });
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

  return [create, search, cancel, consult] as Endpoint<unknown>[];
}
