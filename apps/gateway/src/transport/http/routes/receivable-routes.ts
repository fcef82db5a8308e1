import type { Bus } from '@payments/bus';
import {
  SEARCH_DEFAULT_LIMIT,
  ServiceError,
  Subjects,
  validateSearchRequest,
  type OperationId,
  type ProviderAccountVersion,
  type ReceivableCreateItem,
  type ReceivablesSearchQuery,
  type SearchRequest,
} from '@payments/contracts';
import { assertBatchSize, uuidParam, endpoint, type Endpoint, type MountableEndpoint } from '../endpoint';
import { callbackUrlPolicy, validateCreateBatch } from '../callback-urls';
import { requestBody } from '../json-body';
import { validationError } from '../problem';
import type { GatewayContext } from '../context';

/**
 * Rows of a search page per token of the tenant's rate limit: a search costs
 * ceil(limit / SEARCH_ROWS_PER_TOKEN), so the default page of 500 costs 5 and the largest (5,000)
 * 50, at most the tenant's burst. What a search costs receivables-svc and Postgres grows with the
 * rows it may answer, not with the request (docs/api.md, Limits).
 */
export const SEARCH_ROWS_PER_TOKEN = 100;

/**
 * Receivables: create (batch), cancel, search, consult, history and payment data. In
 * production a url_callback naming a non-public address or localhost is refused (422) before anything
 * is asked of the bus.
 */
export function receivableEndpoints(bus: Bus, runMode: 'development' | 'production'): MountableEndpoint[] {
  const callbackUrls = callbackUrlPolicy(runMode);
  const create: Endpoint<{ receivables: ReceivableCreateItem[]; account: ProviderAccountVersion }> = {
    operation: 'createReceivables',
    async parse(ctx, tenant) {
      const body = requestBody(ctx);
      assertBatchSize(body);
      const result = validateCreateBatch(body, callbackUrls);
      if (!result.ok) throw validationError(result.errors);
      return { receivables: result.value, account: providerAccountOf(ctx, tenant.tenantId) };
    },
    charges: ({ receivables }) => receivables.length,
    async handle({ receivables, account }, ctx, tenant) {
      const reply = await bus.request(Subjects.receivables.create, {
        tenant_id: tenant.tenantId,
        provider_account: account,
        receivables,
      });
      return { status: 202, body: reply };
    },
  };

  const cancel: Endpoint<string> = {
    operation: 'cancelReceivable',
    parse: (ctx) => uuidParam(ctx, 'uuid'),
    async handle(id, ctx, tenant) {
      const reply = await bus.request(Subjects.receivables.cancel, {
        tenant_id: tenant.tenantId,
        account_receivable_id: id,
      });
      return { status: 202, body: reply };
    },
  };

  const search: Endpoint<SearchRequest> = {
    // A read: an Idempotency-Key is ignored, neither stored nor locked, so a retried search (after a
    // bus timeout, say) runs again instead of meeting 409 (docs/api.md, Idempotency).
    operation: 'searchReceivables',
    parse(ctx) {
      const result = validateSearchRequest(requestBody(ctx));
      if (!result.ok) throw validationError(result.errors);
      return result.value;
    },
    reads: (query) => Math.ceil((query.limit ?? SEARCH_DEFAULT_LIMIT) / SEARCH_ROWS_PER_TOKEN),
    async handle(query, ctx, tenant) {
      const reply = await bus.request(Subjects.receivables.search, {
        tenant_id: tenant.tenantId,
        query: searchQueryOf(query),
        limit: query.limit ?? SEARCH_DEFAULT_LIMIT,
        cursor: query.cursor,
      });
      // During a rolling upgrade an older receivables-svc ignores the filters: its page would look
      // like the filtered answer. A 503 has the ERP retry once the new one answers.
      if (hasOptionalFilters(query) && reply.filters_applied !== true)
        throw new ServiceError(
          'service_unavailable',
          'receivables-svc does not apply the search filters yet (an upgrade is under way)',
        );
      return {
        status: 200,
        body: reply.items,
        headers: reply.next_cursor ? { 'x-next-cursor': reply.next_cursor } : undefined,
      };
    },
  };

  const consult = readById(bus, 'consultReceivable', Subjects.receivables.consult);
  // Its state changes, oldest first.
  const history = readById(bus, 'receivableHistory', Subjects.receivables.history);
  // The payment data of its registered callback; 404 until the provider registered it (docs/api.md).
  const paymentData = readById(bus, 'receivablePaymentData', Subjects.receivables.paymentData);
  // The charge as issued: due date, amount, payer and tax id (docs/api.md).
  const detail = readById(bus, 'getReceivable', Subjects.receivables.detail);

  return [
    endpoint(create),
    endpoint(search),
    endpoint(cancel),
    endpoint(consult),
    endpoint(history),
    endpoint(paymentData),
    endpoint(detail),
  ];
}

/** The filters of a search as receivables-svc takes them, named one by one: nothing else of the body travels. */
function searchQueryOf(r: SearchRequest): ReceivablesSearchQuery {
  const query: ReceivablesSearchQuery = { state: r.state, start_date: r.start_date, end_date: r.end_date };
  if (r.payer_name !== undefined) query.payer_name = r.payer_name;
  if (r.payer_tax_id !== undefined) query.payer_tax_id = r.payer_tax_id;
  if (r.our_number !== undefined) query.our_number = r.our_number;
  if (r.value !== undefined) query.value = r.value;
  return query;
}

/** Whether the search names any of the optional filters (docs/api.md, "Search"). */
function hasOptionalFilters(r: SearchRequest): boolean {
  return (
    r.payer_name !== undefined || r.payer_tax_id !== undefined || r.our_number !== undefined || r.value !== undefined
  );
}

type ReadSubject =
  | typeof Subjects.receivables.consult
  | typeof Subjects.receivables.history
  | typeof Subjects.receivables.paymentData
  | typeof Subjects.receivables.detail;

/**
 * A read of one receivable by its id, answered by receivables-svc for the tenant: consult, history,
 * payment data. Another tenant's id is answered 404 there. A read takes no Idempotency-Key.
 */
function readById(bus: Bus, operation: OperationId, subject: ReadSubject): Endpoint<string> {
  return {
    operation,
    parse: (ctx) => uuidParam(ctx, 'uuid'),
    async handle(id, _ctx, tenant) {
      const reply = await bus.request(subject, { tenant_id: tenant.tenantId, account_receivable_id: id });
      return { status: 200, body: reply };
    },
  };
}

/**
 * The tenant's account as the access-token check read it: every charge of the batch is registered with it. Without
 * one (production, until an operator sets it) the batch is refused, before the idempotency key is
 * taken, so the same request succeeds once the account is set.
 */
function providerAccountOf(ctx: GatewayContext, tenantId: string): ProviderAccountVersion {
  const account = ctx.state.providerAccount;
  if (!account)
    throw new ServiceError(
      'no_provider_account',
      `this tenant has no provider account to register charges with; an operator sets it with: npm run admin -- tenant account --tenant ${tenantId} --provider sandbox|inter|pix --beneficiary-name "<name>" --beneficiary-tax-id <cnpj or cpf> ...`,
    );
  return account;
}
