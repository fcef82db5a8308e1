import { Type } from '@sinclair/typebox';
import { PaymentDataSchema } from '../callbacks';
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
import { operation } from './operation-types';
import {
  GUARDED,
  DOWNLOAD_RATE_LIMITED,
  JSON_BODY,
  IDEMPOTENCY_REQUIRED,
  unavailable,
  uuidPath,
  SIGNED_LINK_QUERY,
  SLIP_LINK_RECEIVABLE,
} from './operation-parts';
import * as ex from './examples';

/** Receivables: creating, cancelling, finding and reading charges, and their slip files. In the order of the list. */
export const RECEIVABLE_OPERATIONS = [
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
] as const;
