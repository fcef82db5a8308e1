import { Type, type TSchema } from '@sinclair/typebox';
import { AuthenticateResponseSchema, RefreshTokenResponseSchema } from '../auth';
import { BookletRequestSchema, BookletResponseSchema, BOOKLET_DOWNLOAD_PATH } from '../booklet';
import {
  BookletFailedCallbackSchema,
  BookletSentCallbackSchema,
  CallbackEventSummarySchema,
  CallbackEventViewSchema,
  CallbackListQuerySchema,
  CallbackReplayRequestSchema,
  CallbackReplayResponseSchema,
  CallbackRetryResponseSchema,
  CancellationCallbackSchema,
  CancellationFailedCallbackSchema,
  EVENT_ID_PATTERN,
  PaidCallbackSchema,
  PaymentDataSchema,
  RegisteredCallbackSchema,
  RegistrationFailedCallbackSchema,
  type CallbackEventType,
} from '../callbacks';
import {
  ClientsCreateRequestSchema,
  ClientsCreateResponseSchema,
  ClientUpdateRequestSchema,
  ClientUpdateResponseSchema,
} from '../clients';
import { Uuid } from '../common';
import type { ErrorCode } from '../errors';
import {
  CancelResponseSchema,
  ReceivableDetailSchema,
  ReceivablesCreateRequestSchema,
  ReceivablesCreateResponseSchema,
  SLIP_PDF_PATH,
  SLIP_QRCODE_PATH,
} from '../receivables';
import { ReceivableHistorySchema } from '../receivable-history';
import { ConsultResultSchema, SearchRequestSchema, SearchResponseSchema } from '../search';
import * as ex from './examples';
import type { ExampleObject, HttpMethod, JsonValue } from './types';

/**
 * The HTTP API, operation by operation: the one list the OpenAPI document is built from. The
 * gateway's tests check it against the routes the gateway really mounts, both ways.
 */
export type ApiTag = 'Authentication' | 'Clients' | 'Receivables' | 'Booklets' | 'Callbacks';

export const API_TAGS: Record<ApiTag, string> = {
  Authentication: 'Exchange the integration token for a JWT access token, and renew it.',
  Clients: 'Register and update the payers of charges.',
  Receivables: 'Charges: hybrid bank slip (slip plus PIX) or PIX; created in batches, registered asynchronously.',
  Booklets: 'Bank slip booklets (carnê): one PDF with every installment of a payment_slip_id.',
  Callbacks: 'What was sent to your url_callback: list, inspect and redeliver events.',
};

export interface ApiParameter {
  name: string;
  description: string;
  schema: TSchema;
  required: boolean;
  example: JsonValue;
}

export interface ApiRequestBody {
  description: string;
  schema: TSchema;
  examples: Record<string, ExampleObject>;
}

/** Response headers an operation may add to its success answer (X-Request-Id is on every answer). */
export type SuccessHeader = 'X-Next-Cursor' | 'Cache-Control' | 'Content-Disposition';

export interface ApiSuccess {
  status: 200 | 201 | 202;
  description: string;
  schema: TSchema;
  /** Component name for a response schema that has no $id of its own. */
  componentName?: string;
  /** application/json unless said otherwise. */
  mediaType?: string;
  /** Required for JSON answers; binary answers (the booklet PDF) have none. */
  examples?: Record<string, ExampleObject>;
  headers?: SuccessHeader[];
}

export interface ApiOperation {
  method: HttpMethod;
  /** OpenAPI path template; parameter names are the gateway's route parameter names. */
  path: string;
  operationId: string;
  tag: ApiTag;
  summary: string;
  description: string;
  /** access_token: the JWT; integration_token: the operator-issued secret; none: a signed link. */
  security: 'access_token' | 'integration_token' | 'none';
  /**
   * required: 400 without Idempotency-Key; optional: honoured when sent; none: ignored, neither stored
   * nor locked (safe operations: a repeated search just runs again).
   */
  idempotency: 'required' | 'optional' | 'none';
  pathParameters?: ApiParameter[];
  queryParameters?: ApiParameter[];
  requestBody?: ApiRequestBody;
  success: ApiSuccess;
  /** Every error code the route answers (its status follows from ErrorCatalog), with when it happens. */
  errors: Partial<Record<ErrorCode, string>>;
}

/* Error sets shared by the routes that go through the same gateway pipeline ----------------------- */

/** Endpoints mounted through the gateway's pipeline: access token, then the tenant's rate limit. */
const GUARDED: Partial<Record<ErrorCode, string>> = {
  unauthorized:
    'the access token is missing, malformed or wrongly signed, or its tenant or integration token was disabled or revoked',
  token_expired:
    'the access token has expired: get a new one from POST /api/v1/authenticate (POST /api/v1/refresh-token renews one before it expires)',
  rate_limited: "over the tenant's rate limit; retry after Retry-After seconds",
};

/** The auth endpoints, limited by client address and by credential before any lookup. */
const AUTH_RATE_LIMITED: Partial<Record<ErrorCode, string>> = {
  rate_limited: 'too many authentications from this address or with this credential; retry after Retry-After seconds',
};

/** Signed downloads, limited by client address before the link is checked. */
const DOWNLOAD_RATE_LIMITED: Partial<Record<ErrorCode, string>> = {
  rate_limited: 'too many downloads from this address; retry after Retry-After seconds',
};

/** Endpoints that read a JSON body. */
const JSON_BODY: Partial<Record<ErrorCode, string>> = {
  malformed_json: 'the body is not valid JSON, or nests arrays and objects deeper than 32 levels',
  request_timeout: 'the body did not arrive in time (REQUEST_TIMEOUT_MS, 30 s)',
  payload_too_large: 'the body is larger than 1 MiB',
  unsupported_media_type: 'the body is not application/json',
};

const IDEMPOTENCY_REQUIRED: Partial<Record<ErrorCode, string>> = {
  idempotency_key_missing: 'no Idempotency-Key header',
  idempotency_key_invalid: 'the Idempotency-Key is not 1 to 255 printable ASCII characters',
  idempotency_request_in_progress: 'a request with this Idempotency-Key is still running',
  idempotency_key_reused: 'this Idempotency-Key was used with another request (method, path or body)',
};

const IDEMPOTENCY_OPTIONAL: Partial<Record<ErrorCode, string>> = {
  idempotency_key_invalid: IDEMPOTENCY_REQUIRED.idempotency_key_invalid,
  idempotency_request_in_progress: IDEMPOTENCY_REQUIRED.idempotency_request_in_progress,
  idempotency_key_reused: IDEMPOTENCY_REQUIRED.idempotency_key_reused,
};

const unavailable = (service: string): Partial<Record<ErrorCode, string>> => ({
  service_unavailable: `the ${service} service is not running or did not answer in time, or the gateway cannot reach its database; retry after Retry-After seconds`,
});

/** Endpoints that need only the gateway's own database. */
const DATABASE_UNAVAILABLE: Partial<Record<ErrorCode, string>> = {
  service_unavailable: 'the gateway cannot reach its database; retry after Retry-After seconds',
};

/* Parameters -------------------------------------------------------------------------------------- */

const uuidPath = (description: string, example: string): ApiParameter => ({
  name: 'uuid',
  description,
  schema: Uuid(),
  required: true,
  example,
});

const eventIdPath: ApiParameter = {
  name: 'event_id',
  description: 'The event id: the webhook-id header of the callback',
  schema: Type.String({ pattern: EVENT_ID_PATTERN }),
  required: true,
  example: ex.EventIds.cancelled,
};

/** The query of every signed download link (booklets, slip files): its expiry and HMAC. */
const SIGNED_LINK_QUERY: ApiParameter[] = [
  {
    name: 'expires',
    description: 'Expiry of the link, Unix seconds',
    schema: Type.String({ pattern: '^\\d{1,12}$' }),
    required: true,
    example: ex.DOWNLOAD_EXPIRES_EXAMPLE,
  },
  {
    name: 'signature',
    description: 'HMAC-SHA256 of the link, hex',
    schema: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    required: true,
    example: ex.DOWNLOAD_SIGNATURE_EXAMPLE,
  },
];

/** The charge named in a signed slip file link. */
const SLIP_LINK_RECEIVABLE: ApiParameter = {
  name: 'receivable_id',
  description: 'The charge, as in the link',
  schema: Type.String(),
  required: true,
  example: ex.Ids.receivableSlip,
};

const callbackQuery = CallbackListQuerySchema.properties;

/* Operations -------------------------------------------------------------------------------------- */

/**
 * One operation of the list, its operationId kept as a literal type: OperationId is the union of the
 * list's ids, so the gateway names an operation (and gets its method, path and idempotency from here)
 * and cannot mount a route the document does not describe.
 */
function operation<Id extends string>(
  definition: ApiOperation & { operationId: Id },
): ApiOperation & { operationId: Id } {
  return definition;
}

export const API_OPERATIONS = [
  operation({
    method: 'post',
    path: '/api/v1/authenticate',
    operationId: 'authenticate',
    tag: 'Authentication',
    summary: 'Exchange the integration token for a JWT',
    description:
      'Send the integration token (issued by the operator, kept secret) as `Authorization: Bearer <integration token>`; no body. ' +
      'The access token answered is used as the Bearer token of every other endpoint until `expires_in` seconds have passed.',
    security: 'integration_token',
    idempotency: 'none',
    success: {
      status: 200,
      description: 'A new access token. `token_type` is `Bearer` (capitalised).',
      schema: AuthenticateResponseSchema,
      examples: { token: ex.example('An access token valid for one hour', ex.authenticateResponse) },
      headers: ['Cache-Control'],
    },
    errors: {
      unauthorized: 'no Authorization header, or the integration token is unknown or revoked',
      ...AUTH_RATE_LIMITED,
      ...DATABASE_UNAVAILABLE,
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/refresh-token',
    operationId: 'refreshToken',
    tag: 'Authentication',
    summary: 'Renew the JWT',
    description:
      'Send the current, still valid access token as the Bearer token; no body. Call it before the token expires: an expired token needs a new authentication.',
    security: 'access_token',
    idempotency: 'none',
    success: {
      status: 200,
      description: 'A new access token. `token_type` is `bearer` (lower case, as the interface has it).',
      schema: RefreshTokenResponseSchema,
      examples: { token: ex.example('A renewed access token', ex.refreshTokenResponse) },
      headers: ['Cache-Control'],
    },
    errors: {
      unauthorized: GUARDED.unauthorized,
      token_expired: GUARDED.token_expired,
      ...AUTH_RATE_LIMITED,
      ...DATABASE_UNAVAILABLE,
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/clients',
    operationId: 'createClients',
    tag: 'Clients',
    summary: 'Create one or more clients',
    description:
      'A batch of 1 to 1,000 clients, all or nothing: one invalid item rejects the request and nothing is stored. ' +
      'A client_id already registered for the tenant is listed under `clients_already_registered` and is not changed. ' +
      'With `return_client_data: true` a created client comes back with its data in the Portuguese keys of the interface.',
    security: 'access_token',
    idempotency: 'required',
    requestBody: {
      description:
        'The clients to register. name and cnpj_cpf (valid CPF or CNPJ check digits, punctuation optional) are required.',
      schema: ClientsCreateRequestSchema,
      examples: { batch: ex.example('A person (data returned) and a company', ex.clientsCreateRequest) },
    },
    success: {
      status: 201,
      description: 'Created (also when every client was already registered).',
      schema: ClientsCreateResponseSchema,
      examples: {
        created: ex.example('Both created; the first asked for its data', ex.clientsCreateResponse),
        alreadyRegistered: ex.example(
          'The same batch sent again with a new Idempotency-Key',
          ex.clientsAlreadyRegisteredResponse,
        ),
      },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      payload_too_large: 'the body is larger than 1 MiB, or the batch has more than 1,000 items',
      ...IDEMPOTENCY_REQUIRED,
      validation_failed: 'a field is invalid; `errors` names every one by JSON pointer (e.g. /3/cnpj_cpf)',
      ...unavailable('clients'),
    },
  }),
  operation({
    method: 'put',
    path: '/api/v1/clients/{uuid}',
    operationId: 'updateClient',
    tag: 'Clients',
    summary: 'Update a client',
    description: 'Replaces the client data; the same fields as creation without client_id and return_client_data.',
    security: 'access_token',
    idempotency: 'required',
    pathParameters: [uuidPath('The client_id given when the client was registered', ex.Ids.clientPerson)],
    requestBody: {
      description: 'The new client data.',
      schema: ClientUpdateRequestSchema,
      examples: { update: ex.example('A new address and e-mail', ex.clientUpdateRequest) },
    },
    success: {
      status: 200,
      description: 'Updated; the registered data comes back in the Portuguese keys of the interface.',
      schema: ClientUpdateResponseSchema,
      examples: { updated: ex.example('Updated', ex.clientUpdateResponse) },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      ...IDEMPOTENCY_REQUIRED,
      not_found: 'no client with this client_id for the tenant',
      validation_failed: 'uuid is not a UUID, or a field is invalid; `errors` names every one',
      ...unavailable('clients'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/accounts-receivable',
    operationId: 'createReceivables',
    tag: 'Receivables',
    summary: 'Create one or more receivables',
    description:
      'A batch of 1 to 1,000 charges, all or nothing, stored at once (state Pendente) and registered with the payment provider in the background. ' +
      'Each charge then gets a `registered` callback (see webhooks) with its typeable line, barcode, PIX copy-and-paste text, QR code and PDF. ' +
      'An account_receivable_id already used by the tenant is not created, registered or called back again. ' +
      'discount_date and discount_value are required when discount_type is ValorFixoAteDataInformada.',
    security: 'access_token',
    idempotency: 'required',
    requestBody: {
      description: 'The charges. Every client_id must be a registered client of the tenant.',
      schema: ReceivablesCreateRequestSchema,
      examples: {
        batch: ex.example(
          'A hybrid slip with a discount and a PIX charge of the same booklet',
          ex.receivablesCreateRequest,
        ),
      },
    },
    success: {
      status: 202,
      description: 'Accepted: stored and queued for registration.',
      schema: ReceivablesCreateResponseSchema,
      examples: {
        accepted: ex.example('Accepted', ex.receivablesCreateResponse),
        existing: ex.example('Sent again: one of the two already existed', ex.receivablesCreateExistingResponse),
      },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      payload_too_large: 'the body is larger than 1 MiB, or the batch has more than 1,000 items',
      ...IDEMPOTENCY_REQUIRED,
      validation_failed:
        'a field is invalid, a client_id is not registered, an account_receivable_id is twice in the batch (both items named), or (production) a url_callback host is a non-public address or localhost; `errors` names every one (e.g. /2/client_id)',
      no_provider_account:
        'the tenant has no provider account yet (production only): an operator sets one with `npm run admin -- tenant account`; nothing is stored',
      pix_key_required:
        'a PIX charge (`payment_method` 3) to a bank account without a PIX key; `errors` names each item; nothing is stored',
      slip_not_supported:
        'a slip charge to a bank account that takes PIX charges only (a `pix` account); `errors` names each item; nothing is stored',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/accounts-receivable/{uuid}/cancel',
    operationId: 'cancelReceivable',
    tag: 'Receivables',
    summary: 'Queue cancellation',
    description:
      "No body. The result comes by callback to the receivable's own url_callback (`status: success` or `status: error`). " +
      'A cancellation already queued is answered 202 again without a second cancellation.',
    security: 'access_token',
    idempotency: 'required',
    pathParameters: [uuidPath('The account_receivable_id of the charge', ex.Ids.receivableSlip)],
    success: {
      status: 202,
      description: 'Accepted: sent for cancellation.',
      schema: CancelResponseSchema,
      examples: { accepted: ex.example('Sent for cancellation', ex.cancelResponse) },
    },
    errors: {
      ...GUARDED,
      ...IDEMPOTENCY_REQUIRED,
      not_found: 'no receivable with this id for the tenant',
      conflict: 'the receivable is already cancelled, paid (approved) or rejected',
      validation_failed: 'uuid is not a UUID',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/accounts-receivable/search',
    operationId: 'searchReceivables',
    tag: 'Receivables',
    summary: 'Search receivables',
    description:
      'By state and emission date (start_date and end_date inclusive). The answer is a plain array ordered by emission date, then id, ' +
      'at most `limit` items (default 500, at most 5,000); when more remain, header X-Next-Cursor holds the `cursor` of the next page.',
    security: 'access_token',
    idempotency: 'none',
    requestBody: {
      description: 'The filter, and the page.',
      schema: SearchRequestSchema,
      examples: {
        firstPage: ex.example('Every receivable emitted in February 2026', ex.searchRequest),
        nextPage: ex.example('The next page: the cursor from X-Next-Cursor', ex.searchNextPageRequest),
      },
    },
    success: {
      status: 200,
      description:
        'The matching receivables (the payment type is spelled `paymento_type` here, as the interface has it).',
      schema: SearchResponseSchema,
      examples: { page: ex.example('One paid by PIX, one pending', ex.searchResponse) },
      headers: ['X-Next-Cursor'],
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      validation_failed:
        'a field is invalid, start_date is after end_date, or the cursor is not one this API handed out',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/accounts-receivable/{uuid}/consult-transaction',
    operationId: 'consultReceivable',
    tag: 'Receivables',
    summary: 'Fetch one receivable',
    description: 'No body.',
    security: 'access_token',
    idempotency: 'none',
    pathParameters: [uuidPath('The account_receivable_id of the charge', ex.Ids.receivableSlip)],
    success: {
      status: 200,
      description: 'The receivable (the payment type is spelled `payment_type` here, as the interface has it).',
      schema: ConsultResultSchema,
      examples: {
        paid: ex.example('Paid by PIX', ex.consultResponse),
        pending: ex.example('Not paid yet', ex.consultPendingResponse),
      },
    },
    errors: {
      ...GUARDED,
      not_found: 'no receivable with this id for the tenant',
      validation_failed: 'uuid is not a UUID',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'get',
    path: '/api/v1/accounts-receivable/{uuid}/history',
    operationId: 'receivableHistory',
    tag: 'Receivables',
    summary: "A receivable's state changes",
    description:
      'Oldest first: its receipt (`from_state` null, `to_state` pending), then every change of state (paid, rejected by the provider, cancelled) with when and why. ' +
      'Registration with the provider changes no state: it is told by the registered callback.',
    security: 'access_token',
    idempotency: 'none',
    pathParameters: [uuidPath('The account_receivable_id of the charge', ex.Ids.receivableSlip)],
    success: {
      status: 200,
      description: 'Its history.',
      schema: ReceivableHistorySchema,
      examples: { paid: ex.example('Received, then paid by PIX', ex.historyResponse) },
    },
    errors: {
      ...GUARDED,
      not_found: 'no receivable with this id for the tenant',
      validation_failed: 'uuid is not a UUID',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'get',
    path: '/api/v1/accounts-receivable/{uuid}',
    operationId: 'getReceivable',
    tag: 'Receivables',
    summary: 'A receivable as it was issued',
    description:
      'What the charge was created with: its ERP ids, payment method, amount, emission and due dates, and the payer with the tax id printed on the slip; ' +
      'with the state label consult answers. An addition to the interface: consult answers the state and the payment, this the charge itself.',
    security: 'access_token',
    idempotency: 'none',
    pathParameters: [uuidPath('The account_receivable_id of the charge', ex.Ids.receivableSlip)],
    success: {
      status: 200,
      description: 'The charge as issued.',
      schema: ReceivableDetailSchema,
      examples: { pending: ex.example('A hybrid slip waiting for its payment', ex.receivableDetail) },
    },
    errors: {
      ...GUARDED,
      not_found: 'no receivable with this id for the tenant',
      validation_failed: 'uuid is not a UUID',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'get',
    path: '/api/v1/accounts-receivable/{uuid}/payment-data',
    operationId: 'receivablePaymentData',
    tag: 'Receivables',
    summary: "A registered receivable's payment data",
    description:
      'The `payment_data` of its registered callback, field for field: typeable line, barcode, our_number, PIX copy-and-paste, QR code image link and PDF link. ' +
      'For an ERP that missed the callback. It stays readable after the charge is paid or cancelled.',
    security: 'access_token',
    idempotency: 'none',
    pathParameters: [uuidPath('The account_receivable_id of the charge', ex.Ids.receivableSlip)],
    success: {
      status: 200,
      description: 'Its payment data.',
      schema: PaymentDataSchema,
      componentName: 'PaymentData',
      examples: { registered: ex.example('A registered hybrid slip', ex.registeredCallback.payment_data) },
    },
    errors: {
      ...GUARDED,
      not_found:
        'no receivable with this id for the tenant, or it is not registered with the provider yet (or the provider rejected it)',
      validation_failed: 'uuid is not a UUID',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'get',
    path: `${SLIP_PDF_PATH}/{receivable_id}`,
    operationId: 'downloadSlipPdf',
    tag: 'Receivables',
    summary: 'Download a slip PDF (signed link)',
    description:
      'The `pdf` link of a registered callback when the bank serves its PDF only behind its own authentication (Banco Inter). ' +
      'It needs no bearer token: the signature in the query is the credential, and it expires 90 days after the due date. Use the link exactly as received.',
    security: 'none',
    idempotency: 'none',
    pathParameters: [SLIP_LINK_RECEIVABLE],
    queryParameters: SIGNED_LINK_QUERY,
    success: {
      status: 200,
      description: 'The slip PDF, as the bank issued it.',
      schema: Type.String({ contentMediaType: 'application/pdf' }),
      mediaType: 'application/pdf',
      headers: ['Content-Disposition', 'Cache-Control'],
    },
    errors: {
      forbidden: 'the link was altered or is incomplete',
      ...DOWNLOAD_RATE_LIMITED,
      not_found: 'the charge no longer exists or has no PDF at its bank',
      gone: 'the link has expired (90 days after the due date)',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'get',
    path: `${SLIP_QRCODE_PATH}/{receivable_id}`,
    operationId: 'downloadSlipQrCode',
    tag: 'Receivables',
    summary: 'Download a PIX QR code image (signed link)',
    description:
      'The `qrcode_image` link of a registered callback when the bank serves no QR code image of its own (Banco Inter): ' +
      "a PNG of the QR code of the charge's `pix_copy_and_paste`. " +
      'It needs no bearer token: the signature in the query is the credential, and it expires 90 days after the due date. Use the link exactly as received.',
    security: 'none',
    idempotency: 'none',
    pathParameters: [SLIP_LINK_RECEIVABLE],
    queryParameters: SIGNED_LINK_QUERY,
    success: {
      status: 200,
      description: "The QR code of the charge's PIX copy-and-paste, as a PNG image.",
      schema: Type.String({ contentMediaType: 'image/png' }),
      mediaType: 'image/png',
      headers: ['Content-Disposition', 'Cache-Control'],
    },
    errors: {
      forbidden: 'the link was altered or is incomplete',
      ...DOWNLOAD_RATE_LIMITED,
      not_found: 'the charge no longer exists or is not registered with its bank',
      gone: 'the link has expired (90 days after the due date)',
      ...unavailable('receivables'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/bank-slip-booklet/{uuid}',
    operationId: 'requestBooklet',
    tag: 'Booklets',
    summary: 'Queue booklet generation',
    description:
      'Builds, in the background, one PDF with every open installment of the payment_slip_id, ordered by due date. ' +
      'When it is ready, a `sent` callback with a signed `download` link (no bearer token needed; it expires) goes to url_callback.',
    security: 'access_token',
    idempotency: 'required',
    pathParameters: [uuidPath('The payment_slip_id given to the receivables of the booklet', ex.Ids.paymentSlip)],
    requestBody: {
      description: 'Where the sent callback goes.',
      schema: BookletRequestSchema,
      examples: { request: ex.example('Callback to the ERP', ex.bookletRequest) },
    },
    success: {
      status: 202,
      description: 'Accepted: the booklet is being prepared (a synchronous answer, not a callback).',
      schema: BookletResponseSchema,
      examples: { preparing: ex.example('Preparing a 12-installment booklet', ex.bookletResponse) },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      ...IDEMPOTENCY_REQUIRED,
      not_found: 'no receivable with this payment_slip_id for the tenant',
      validation_failed:
        'uuid is not a UUID, or url_callback is not an http(s) URL or (production) its host is a non-public address or localhost',
      ...unavailable('booklets'),
    },
  }),
  operation({
    method: 'get',
    path: `${BOOKLET_DOWNLOAD_PATH}/{booklet_id}`,
    operationId: 'downloadBooklet',
    tag: 'Booklets',
    summary: 'Download a booklet PDF (signed link)',
    description:
      'The `download` link of the sent callback. It needs no bearer token: the signature in the query is the credential, and it expires ' +
      '(DOWNLOAD_LINK_TTL_SECONDS, 7 days by default). Use the link exactly as received.',
    security: 'none',
    idempotency: 'none',
    pathParameters: [
      {
        name: 'booklet_id',
        description: 'The booklet, as in the link',
        schema: Type.String(),
        required: true,
        example: ex.Ids.booklet,
      },
    ],
    queryParameters: SIGNED_LINK_QUERY,
    success: {
      status: 200,
      description: 'The booklet PDF.',
      schema: Type.String({ contentMediaType: 'application/pdf' }),
      mediaType: 'application/pdf',
      headers: ['Content-Disposition', 'Cache-Control'],
    },
    errors: {
      forbidden: 'the link was altered or is incomplete',
      ...DOWNLOAD_RATE_LIMITED,
      not_found: 'the booklet no longer exists',
      gone: 'the link has expired: request the booklet again',
      ...unavailable('booklets'),
    },
  }),
  operation({
    method: 'get',
    path: '/api/v1/callbacks',
    operationId: 'listCallbacks',
    tag: 'Callbacks',
    summary: 'List callback events',
    description:
      'The events sent (or being sent) to your callback URLs, newest first, without their attempts. When more remain, header X-Next-Cursor holds the `cursor` of the next page.',
    security: 'access_token',
    idempotency: 'none',
    queryParameters: [
      {
        name: 'status',
        description: 'Only events in this delivery state',
        schema: callbackQuery.status,
        required: false,
        example: 'dead',
      },
      {
        name: 'limit',
        description: 'Page size (default 50)',
        schema: callbackQuery.limit,
        required: false,
        example: 50,
      },
      {
        name: 'cursor',
        description: 'X-Next-Cursor of the previous page',
        schema: callbackQuery.cursor,
        required: false,
        example: 'MjAyNi0wMi0yMVQxMjowMDowMy4yMDRa',
      },
      {
        name: 'receivable_id',
        description:
          'Only the events of this charge (its registered, paid, cancelled... callbacks); events stored before this filter existed are not found by it',
        schema: callbackQuery.receivable_id,
        required: false,
        example: ex.Ids.receivableSlip,
      },
    ],
    success: {
      status: 200,
      description: 'A page of events.',
      schema: Type.Array(CallbackEventSummarySchema),
      componentName: 'CallbackEventList',
      examples: { page: ex.example('One being retried, one delivered', ex.callbackListResponse) },
      headers: ['X-Next-Cursor'],
    },
    errors: {
      ...GUARDED,
      validation_failed: 'a query parameter is invalid, or the cursor is not one this API handed out',
      ...unavailable('callbacks'),
    },
  }),
  operation({
    method: 'get',
    path: '/api/v1/callbacks/{event_id}',
    operationId: 'getCallback',
    tag: 'Callbacks',
    summary: 'Inspect a callback event',
    description:
      'The event with every delivery attempt, oldest first (`status_code` is null when no HTTP answer came; ' +
      "`response_excerpt` is the start of your receiver's answer, as it sent it: show it escaped), and its " +
      '`payload`: the JSON body POSTed on every attempt, as the webhook of its `event_type` describes it. A ' +
      "booklet's `download` link, for one, can be read back here from its `booklet.sent` event.",
    security: 'access_token',
    idempotency: 'none',
    pathParameters: [eventIdPath],
    success: {
      status: 200,
      description: 'The event.',
      schema: CallbackEventViewSchema,
      examples: {
        delivered: ex.example('Delivered on the third attempt', ex.callbackEventView),
        booklet_sent: ex.example("A booklet's sent event, its download link in the payload", ex.bookletSentEventView),
      },
    },
    errors: { ...GUARDED, not_found: 'no event with this id for the tenant', ...unavailable('callbacks') },
  }),
  operation({
    method: 'post',
    path: '/api/v1/callbacks/{event_id}/retry',
    operationId: 'retryCallback',
    tag: 'Callbacks',
    summary: 'Redeliver a dead callback event',
    description:
      'No body. Queues an event that exhausted its attempts (status dead) for delivery again, with the same webhook-id.',
    security: 'access_token',
    idempotency: 'optional',
    pathParameters: [eventIdPath],
    success: {
      status: 202,
      description: 'Accepted: queued for delivery again.',
      schema: CallbackRetryResponseSchema,
      examples: { queued: ex.example('Queued again', ex.callbackRetryResponse) },
    },
    errors: {
      ...GUARDED,
      ...IDEMPOTENCY_OPTIONAL,
      not_found: 'no event with this id for the tenant',
      conflict: 'the event is not dead (still pending, or delivered)',
      ...unavailable('callbacks'),
    },
  }),
  operation({
    method: 'post',
    path: '/api/v1/callbacks/replay',
    operationId: 'replayCallbacks',
    tag: 'Callbacks',
    summary: 'Redeliver every dead callback event of a time span',
    description:
      'Queues again, as retry does for one, every event of yours with status dead that was given up in [since, until) (until: now when absent), ' +
      'each with a fresh run of attempts and the same webhook-id. At most 10,000 per call, those given up first; the answer says how many: ' +
      'call again with the same span for the rest. For after an outage of your receiver.',
    security: 'access_token',
    idempotency: 'optional',
    requestBody: {
      description: 'The span in which the events were given up.',
      schema: CallbackReplayRequestSchema,
      examples: { outage: ex.example('Since the receiver went down', ex.callbackReplayRequest) },
    },
    success: {
      status: 202,
      description: 'Accepted: queued for delivery again.',
      schema: CallbackReplayResponseSchema,
      examples: { queued: ex.example('42 queued again', ex.callbackReplayResponse) },
    },
    errors: {
      ...GUARDED,
      ...JSON_BODY,
      ...IDEMPOTENCY_OPTIONAL,
      validation_failed:
        'since is missing, not a date-time, in the future or more than 30 days back, or until is not a date-time after since',
      ...unavailable('callbacks'),
    },
  }),
] as const;

/** The id of an operation of API_OPERATIONS. */
export type OperationId = (typeof API_OPERATIONS)[number]['operationId'];

/** The operation of an id. */
export function apiOperation(id: OperationId): ApiOperation {
  const found = API_OPERATIONS.find((candidate) => candidate.operationId === id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
}

/** The path of an operation as a router writes it: `{uuid}` becomes `:uuid`. */
export function routerPath(operation: ApiOperation): string {
  return operation.path.replace(/\{([a-z_]+)\}/g, ':$1');
}

/* Webhooks (the callbacks the service sends) ------------------------------------------------------ */

export interface ApiWebhook {
  /** The event type, as GET /api/v1/callbacks reports it. */
  eventType: CallbackEventType;
  summary: string;
  description: string;
  schema: TSchema;
  example: ExampleObject;
}

export const API_WEBHOOKS: readonly ApiWebhook[] = [
  {
    eventType: 'receivable.registered',
    summary: 'A receivable was registered with the payment provider',
    description:
      'Carries the payment data: typeable line, barcode, our number, PIX copy-and-paste text, QR code image and PDF links.',
    schema: RegisteredCallbackSchema,
    example: ex.example('A hybrid slip registered', ex.registeredCallback),
  },
  {
    eventType: 'receivable.registration_failed',
    summary: 'The provider refused a receivable',
    description: 'The receivable is now rejected (Rejeitada).',
    schema: RegistrationFailedCallbackSchema,
    example: ex.example('Refused by the provider', ex.registrationFailedCallback),
  },
  {
    eventType: 'receivable.cancelled',
    summary: 'A cancellation completed',
    description: 'The receivable is now cancelled (Cancelada).',
    schema: CancellationCallbackSchema,
    example: ex.example('Cancelled', ex.cancellationCallback),
  },
  {
    eventType: 'receivable.cancellation_failed',
    summary: 'A cancellation failed',
    description: 'The receivable keeps its state.',
    schema: CancellationFailedCallbackSchema,
    example: ex.example('Not cancelled', ex.cancellationFailedCallback),
  },
  {
    eventType: 'receivable.paid',
    summary: 'A receivable was paid',
    description: 'The receivable is now approved (Aprovada); payment_type is Boleto, Pix or Manual.',
    schema: PaidCallbackSchema,
    example: ex.example('Paid by PIX', ex.paidCallback),
  },
  {
    eventType: 'booklet.sent',
    summary: 'A booklet is ready',
    description: '`download` is a signed gateway link that serves the PDF without a bearer token until it expires.',
    schema: BookletSentCallbackSchema,
    example: ex.example('Ready to download', ex.bookletSentCallback),
  },
  {
    eventType: 'booklet.failed',
    summary: 'A booklet could not be built',
    description: 'For example when every installment was cancelled or rejected.',
    schema: BookletFailedCallbackSchema,
    example: ex.example('Nothing left to print', ex.bookletFailedCallback),
  },
];
