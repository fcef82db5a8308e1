import { Type } from '@sinclair/typebox';
import {
  CallbackEventSummarySchema,
  CallbackEventViewSchema,
  CallbackListQuerySchema,
  CallbackReplayRequestSchema,
  CallbackReplayResponseSchema,
  CallbackRetryResponseSchema,
} from '../callbacks';
import { operation } from './operation-types';
import { GUARDED, JSON_BODY, IDEMPOTENCY_OPTIONAL, unavailable, eventIdPath } from './operation-parts';
import * as ex from './examples';

const callbackQuery = CallbackListQuerySchema.properties;

/** Callbacks: listing, inspecting and redelivering what was sent to url_callback. In the order of the list. */
export const CALLBACK_OPERATIONS = [
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
