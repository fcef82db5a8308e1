import { Type } from '@sinclair/typebox';
import { BookletRequestSchema, BookletResponseSchema, BOOKLET_DOWNLOAD_PATH } from '../booklet';
import { operation } from './operation-types';
import {
  GUARDED,
  DOWNLOAD_RATE_LIMITED,
  JSON_BODY,
  IDEMPOTENCY_REQUIRED,
  unavailable,
  uuidPath,
  SIGNED_LINK_QUERY,
} from './operation-parts';
import * as ex from './examples';

/** Booklets: asking for one and downloading its PDF. In the order of the list. */
export const BOOKLET_OPERATIONS = [
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
] as const;
