import { Type, type Static } from '@sinclair/typebox';
import { OpaqueToken, Uuid } from './common';
import { messageIds } from './message-ids';

/**
 * Callbacks: the payloads ERPs receive (the interface spec and docs/api.md, Callbacks), the delivery request producers
 * publish on JetStream, and the visibility API (GET /api/v1/callbacks...).
 */
export const CallbackEventTypes = [
  'receivable.registered',
  'receivable.registration_failed',
  'receivable.cancelled',
  'receivable.cancellation_failed',
  'receivable.paid',
  'booklet.sent',
  'booklet.failed',
] as const;
export type CallbackEventType = (typeof CallbackEventTypes)[number];

const ErrorDetail = Type.Object({ code: Type.String(), message: Type.String() });

export const PaymentDataSchema = Type.Object({
  typeable_line: Type.String(),
  barcode: Type.String(),
  our_number: Type.String(),
  pix_copy_and_paste: Type.String(),
  /** A link to the QR code image; empty (with pix_copy_and_paste) when the bank issued the slip without PIX. */
  qrcode_image: Type.String({ format: 'uri-or-empty' }),
  pdf: Type.String({ format: 'uri' }),
});

/** What a registered callback's payment_data holds; GET .../{uuid}/payment-data answers the same. */
export type PaymentData = Static<typeof PaymentDataSchema>;

export const RegisteredCallbackSchema = Type.Object(
  {
    success: Type.Literal(true),
    type: Type.Literal('registered'),
    accounts_receivable_id: Uuid(),
    payment_data: PaymentDataSchema,
  },
  { $id: 'RegisteredCallback' },
);
export const RegistrationFailedCallbackSchema = Type.Object(
  {
    success: Type.Literal(false),
    type: Type.Literal('registered'),
    accounts_receivable_id: Uuid(),
    error: ErrorDetail,
  },
  { $id: 'RegistrationFailedCallback' },
);
export const CancellationCallbackSchema = Type.Object(
  { status: Type.Literal('success'), accounts_receivable_id: Uuid(), message: Type.String() },
  { $id: 'CancellationCallback' },
);
export const CancellationFailedCallbackSchema = Type.Object(
  { status: Type.Literal('error'), accounts_receivable_id: Uuid(), message: Type.String() },
  { $id: 'CancellationFailedCallback' },
);
export const PaidCallbackSchema = Type.Object(
  {
    success: Type.Literal(true),
    type: Type.Literal('paid'),
    accounts_receivable_id: Uuid(),
    payment_date: Type.String({ description: 'ISO 8601, fractional seconds, no zone' }),
    amount_paid: Type.Number(),
    fee_amount: Type.Number(),
    payment_type: Type.String(),
  },
  { $id: 'PaidCallback' },
);
export const BookletSentCallbackSchema = Type.Object(
  {
    success: Type.Literal(true),
    type: Type.Literal('sent'),
    payment_slip_id: Uuid(),
    download: Type.String({ format: 'uri' }),
    installments: Type.Integer({ minimum: 0, description: 'How many installments the booklet holds' }),
  },
  { $id: 'BookletSentCallback' },
);
export const BookletFailedCallbackSchema = Type.Object(
  { success: Type.Literal(false), type: Type.Literal('sent'), payment_slip_id: Uuid(), error: ErrorDetail },
  { $id: 'BookletFailedCallback' },
);
export type RegisteredCallback = Static<typeof RegisteredCallbackSchema>;
export type RegistrationFailedCallback = Static<typeof RegistrationFailedCallbackSchema>;
export type CancellationCallback = Static<typeof CancellationCallbackSchema>;
export type CancellationFailedCallback = Static<typeof CancellationFailedCallbackSchema>;
export type PaidCallback = Static<typeof PaidCallbackSchema>;
export type BookletSentCallback = Static<typeof BookletSentCallbackSchema>;
export type BookletFailedCallback = Static<typeof BookletFailedCallbackSchema>;

/** Event ids travel in URLs and headers: a safe alphabet only. */
export const EVENT_ID_PATTERN = '^[A-Za-z0-9_-]{1,100}$';

/** One delivery a producer asks for; it travels in a CallbackRequestBatch. */
export const CallbackRequestSchema = Type.Object(
  {
    event_id: Type.String({ pattern: EVENT_ID_PATTERN }),
    tenant_id: Uuid(),
    event_type: Type.Union(CallbackEventTypes.map((t) => Type.Literal(t))),
    url: Type.String({ format: 'uri', maxLength: 2048 }),
    payload: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'CallbackRequest' },
);
export type CallbackRequest = Static<typeof CallbackRequestSchema>;

/** At most this many requests per batch: about 100 KB for receivable callbacks, well under NATS's 1 MB. */
export const MAX_CALLBACK_BATCH = 100;

/**
 * What producers publish on the callback requests stream: the callbacks one unit of work caused
 * (a registration job's 100 receivables, one payment). One message per batch rather than per callback:
 * per message, JetStream costs a publish acknowledgement, a consumer ack and a span on both sides.
 */
export const CallbackRequestBatchSchema = Type.Object(
  { requests: Type.Array(CallbackRequestSchema, { minItems: 1, maxItems: MAX_CALLBACK_BATCH }) },
  { $id: 'CallbackRequestBatch' },
);
export type CallbackRequestBatch = Static<typeof CallbackRequestBatchSchema>;

/**
 * Splits requests into batches of at most MAX_CALLBACK_BATCH, each with a stable message id (for
 * JetStream's de-duplication of a republished outbox row): messageIds.callbackBatch.
 */
export function batchCallbackRequests(
  requests: CallbackRequest[],
): Array<{ msgId: string; batch: CallbackRequestBatch }> {
  const batches: Array<{ msgId: string; batch: CallbackRequestBatch }> = [];
  for (let i = 0; i < requests.length; i += MAX_CALLBACK_BATCH) {
    const batch: CallbackRequestBatch = { requests: requests.slice(i, i + MAX_CALLBACK_BATCH) };
    batches.push({ msgId: messageIds.callbackBatch(batch), batch });
  }
  return batches;
}

export const CallbackStatuses = ['pending', 'delivered', 'dead'] as const;
export type CallbackStatus = (typeof CallbackStatuses)[number];

/** The most of a receiver's answer an attempt keeps (characters; read as the first 1,024 bytes, as UTF-8). */
export const MAX_RESPONSE_EXCERPT = 1024;

export const CallbackAttemptSchema = Type.Object({
  attempted_at: Type.String({ format: 'date-time' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  response_excerpt: Type.Union([Type.String({ maxLength: MAX_RESPONSE_EXCERPT }), Type.Null()], {
    description:
      "The start of the receiver's answer body (its first 1,024 bytes, read as UTF-8: bytes that are not UTF-8, " +
      "and NUL, show as U+FFFD); null when no answer came or it was empty. Text of your receiver's making, not " +
      'ours: display it escaped',
  }),
});

/** GET /api/v1/callbacks/{event_id}: the event, its attempts and its payload (the list leaves the payload out). */
export const CallbackEventViewSchema = Type.Object(
  {
    event_id: Type.String(),
    event_type: Type.String(),
    url: Type.String(),
    status: Type.Union(CallbackStatuses.map((s) => Type.Literal(s))),
    created_at: Type.String({ format: 'date-time' }),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempts: Type.Array(CallbackAttemptSchema),
    payload: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description:
        'The JSON body POSTed to the url on every attempt (its shape follows event_type: see the webhooks); ' +
        'null if the stored body is not a JSON object',
    }),
  },
  { $id: 'CallbackEventView' },
);
export type CallbackEventView = Static<typeof CallbackEventViewSchema>;

/** An item of GET /api/v1/callbacks: the event without its attempts, with their count. */
export const CallbackEventSummarySchema = Type.Object(
  {
    event_id: Type.String(),
    event_type: Type.String(),
    url: Type.String(),
    status: Type.Union(CallbackStatuses.map((s) => Type.Literal(s))),
    created_at: Type.String({ format: 'date-time' }),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempt_count: Type.Integer(),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the next attempt is due; null when none is scheduled (delivered, dead) or one is under way',
    }),
  },
  { $id: 'CallbackEventSummary' },
);
export type CallbackEventSummary = Static<typeof CallbackEventSummarySchema>;

export const CallbackListQuerySchema = Type.Object(
  {
    status: Type.Optional(Type.Union(CallbackStatuses.map((s) => Type.Literal(s)))),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    cursor: Type.Optional(OpaqueToken(512, 'X-Next-Cursor of the previous page')),
    receivable_id: Type.Optional(Uuid('Only the events of this charge (its registered, paid, cancelled... callbacks)')),
  },
  { $id: 'CallbackListQuery' },
);
export type CallbackListQuery = Static<typeof CallbackListQuerySchema>;

export const CallbackRetryResponseSchema = Type.Object(
  { status: Type.Literal('success'), message: Type.String(), event_id: Type.String() },
  { $id: 'CallbackRetryResponse' },
);
export type CallbackRetryResponse = Static<typeof CallbackRetryResponseSchema>;

/** POST /api/v1/callbacks/replay: at most this many dead events are queued again per call. */
export const MAX_CALLBACK_REPLAY = 10_000;
/** How far back `since` of a replay may go, in days. */
export const CALLBACK_REPLAY_MAX_DAYS = 30;

/** POST /api/v1/callbacks/replay: the dead events whose dead_at is in [since, until). */
export const CallbackReplayRequestSchema = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: `ISO 8601 date-time: not in the future, at most ${CALLBACK_REPLAY_MAX_DAYS} days back`,
    }),
    until: Type.Optional(
      Type.String({ format: 'date-time', description: 'ISO 8601 date-time, after since; default: now' }),
    ),
  },
  { $id: 'CallbackReplayRequest' },
);
export type CallbackReplayRequest = Static<typeof CallbackReplayRequestSchema>;

export const CallbackReplayResponseSchema = Type.Object(
  {
    replayed: Type.Integer({
      minimum: 0,
      description: `How many dead events were queued again (at most ${MAX_CALLBACK_REPLAY})`,
    }),
    since: Type.String({ format: 'date-time' }),
    until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'CallbackReplayResponse' },
);
export type CallbackReplayResponse = Static<typeof CallbackReplayResponseSchema>;

/** Bus commands (gateway -> callback-svc) and replies. */
export interface CallbackListCommand {
  tenant_id: string;
  status?: CallbackStatus;
  limit: number;
  cursor?: string;
  /** Only the events of this charge (a UUID). An older callback-svc ignores it (answers unfiltered). */
  receivable_id?: string;
}
export interface CallbackListReply {
  items: CallbackEventSummary[];
  next_cursor: string | null;
}
export interface CallbackGetCommand {
  tenant_id: string;
  event_id: string;
}
export type CallbackRetryCommand = CallbackGetCommand;
export interface CallbackReplayCommand {
  tenant_id: string;
  /** ISO 8601; checked by the gateway (not in the future, at most CALLBACK_REPLAY_MAX_DAYS back). */
  since: string;
  /** ISO 8601, or null: until now. */
  until: string | null;
}

/** callback-svc -> gateway: the tenant's Standard Webhooks signing secret. */
export interface SigningSecretCommand {
  tenant_id: string;
}
export interface SigningSecretReply {
  /** The current secret: every callback is signed with it. */
  signing_secret: string;
  /** The secret before the last rotation while its overlap lasts (callbacks carry both signatures), else null. */
  previous_signing_secret: string | null;
  /** ISO 8601 end of that overlap, or null. */
  previous_valid_until: string | null;
  /**
   * How long callback-svc may sign with this reply, counted from when it sent the request: at most
   * SIGNING_SECRET_MAX_AGE_MS, less when the overlap ends sooner. A rotation waits that long before
   * the admin CLI reports it done, so the next callback after it is signed with the new secret on
   * every instance.
   */
  max_age_ms: number;
}

/** The longest a callback-svc instance signs with a secret it was told (see SigningSecretReply.max_age_ms). */
export const SIGNING_SECRET_MAX_AGE_MS = 1_000;
