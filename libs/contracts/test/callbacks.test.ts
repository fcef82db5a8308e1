import {
  BookletFailedCallbackSchema,
  BookletSentCallbackSchema,
  CallbackEventTypes,
  CallbackEventViewSchema,
  CallbackListQuerySchema,
  batchCallbackRequests,
  CallbackRequestBatchSchema,
  CallbackRequestSchema,
  MAX_CALLBACK_BATCH,
  MAX_RESPONSE_EXCERPT,
  CancellationCallbackSchema,
  CancellationFailedCallbackSchema,
  compileValidator,
  PaidCallbackSchema,
  RegisteredCallbackSchema,
  RegistrationFailedCallbackSchema,
  type CallbackRequest,
} from '../src';
import type { TSchema } from '@sinclair/typebox';

const AR = '3a2b1c0d-9e8f-4a6b-8c4d-3e2f1a0b9c8d';
const SLIP = '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a';

const registered = {
  success: true,
  type: 'registered',
  accounts_receivable_id: AR,
  payment_data: {
    typeable_line: '00190000090114971860168524522114675860000102656',
    barcode: '00196758600001026560000001149718606852452211',
    our_number: '11497186068',
    pix_copy_and_paste:
      '00020101021226830014br.gov.bcb.pix2561qrcodes.example.com/v2/cobv/abc5204000053039865406150.505802BR5913ACME LTDA6009SAO PAULO62070503***6304ABCD',
    qrcode_image: 'https://bank.example.com/qrcodes/11497186068.png',
    pdf: 'https://bank.example.com/slips/11497186068.pdf',
  },
};

const examples: Array<[string, TSchema, unknown]> = [
  ['registered', RegisteredCallbackSchema, registered],
  [
    'registration failed',
    RegistrationFailedCallbackSchema,
    {
      success: false,
      type: 'registered',
      accounts_receivable_id: AR,
      error: { code: 'provider_rejected', message: 'Invalid payer document' },
    },
  ],
  [
    'cancelled',
    CancellationCallbackSchema,
    { status: 'success', accounts_receivable_id: AR, message: 'Receivable cancelled' },
  ],
  [
    'cancellation failed',
    CancellationFailedCallbackSchema,
    { status: 'error', accounts_receivable_id: AR, message: 'Receivable already paid' },
  ],
  [
    'paid',
    PaidCallbackSchema,
    {
      success: true,
      type: 'paid',
      accounts_receivable_id: AR,
      payment_date: '2026-11-23T14:05:09.123',
      amount_paid: 150.5,
      fee_amount: 1.99,
      payment_type: 'Pix',
    },
  ],
  [
    'booklet sent',
    BookletSentCallbackSchema,
    {
      success: true,
      type: 'sent',
      payment_slip_id: SLIP,
      download: 'https://api.example.com/api/v1/downloads/booklets/abc?exp=1&sig=x',
      installments: 3,
    },
  ],
  [
    'booklet failed',
    BookletFailedCallbackSchema,
    {
      success: false,
      type: 'sent',
      payment_slip_id: SLIP,
      error: { code: 'not_found', message: 'No receivables for this payment_slip_id' },
    },
  ],
];

describe('callback payloads', () => {
  it.each(examples)('%s example validates', (_name, schema, payload) => {
    expect(compileValidator(schema)(structuredClone(payload))).toEqual({ ok: true, value: payload });
  });

  it('a registered payload without payment_data fails', () => {
    const { payment_data: _omit, ...rest } = registered;
    expect(compileValidator(RegisteredCallbackSchema)(rest)).toEqual({
      ok: false,
      errors: [{ path: '/payment_data', message: 'is required' }],
    });
  });

  it('a registered payload of a slip without PIX has empty PIX fields and passes', () => {
    const noPix = {
      ...registered,
      payment_data: { ...registered.payment_data, pix_copy_and_paste: '', qrcode_image: '' },
    };
    expect(compileValidator(RegisteredCallbackSchema)(noPix).ok).toBe(true);
  });

  it('a registered payload with a non-URL qrcode_image fails', () => {
    const bad = { ...registered, payment_data: { ...registered.payment_data, qrcode_image: 'not a url' } };
    const r = compileValidator(RegisteredCallbackSchema)(bad);
    expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual(['/payment_data/qrcode_image']);
  });

  it('success and failure shapes do not cross', () => {
    expect(compileValidator(RegisteredCallbackSchema)({ ...registered, success: false }).ok).toBe(false);
    expect(
      compileValidator(CancellationCallbackSchema)({ status: 'error', accounts_receivable_id: AR, message: 'x' }).ok,
    ).toBe(false);
  });
});

describe('callback delivery request and visibility', () => {
  const validateRequest = compileValidator(CallbackRequestSchema);
  const request = {
    event_id: 'evt_01JD0000000000000000000000',
    tenant_id: '11111111-2222-4333-8444-555555555555',
    event_type: 'receivable.paid',
    url: 'https://erp.example.com/cb',
    payload: { success: true },
  };

  it('accepts every event type', () => {
    for (const event_type of CallbackEventTypes) expect(validateRequest({ ...request, event_type }).ok).toBe(true);
  });

  it('rejects an unknown event type, a bad tenant and a non-object payload', () => {
    const r = validateRequest({ ...request, event_type: 'receivable.unknown', tenant_id: 'x', payload: 'x' });
    expect(r.ok ? [] : r.errors.map((e) => e.path).sort()).toEqual(['/event_type', '/payload', '/tenant_id']);
  });

  it('batches requests by at most MAX_CALLBACK_BATCH, each batch valid and with a stable message id', () => {
    const requests = Array.from({ length: MAX_CALLBACK_BATCH * 2 + 1 }, (_, i): CallbackRequest => ({
      ...request,
      event_type: 'receivable.paid',
      event_id: `evt_${i}`,
    }));
    const batches = batchCallbackRequests(requests);
    expect(batches.map((b) => b.batch.requests.length)).toEqual([MAX_CALLBACK_BATCH, MAX_CALLBACK_BATCH, 1]);
    expect(batches.map((b) => b.msgId)).toEqual([
      `evt_0+${MAX_CALLBACK_BATCH}`,
      `evt_${MAX_CALLBACK_BATCH}+${MAX_CALLBACK_BATCH}`,
      `evt_${MAX_CALLBACK_BATCH * 2}`,
    ]);
    expect(batches.flatMap((b) => b.batch.requests)).toEqual(requests);
    const validateBatch = compileValidator(CallbackRequestBatchSchema);
    for (const b of batches) expect(validateBatch(b.batch).ok).toBe(true);
    expect(batchCallbackRequests([])).toEqual([]);
  });

  it('refuses an empty batch, an oversized one, and names a bad request inside', () => {
    const validateBatch = compileValidator(CallbackRequestBatchSchema);
    expect(validateBatch({ requests: [] }).ok).toBe(false);
    expect(validateBatch({ requests: Array.from({ length: MAX_CALLBACK_BATCH + 1 }, () => request) }).ok).toBe(false);
    const r = validateBatch({ requests: [request, { ...request, tenant_id: 'x' }] });
    expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual(['/requests/1/tenant_id']);
  });

  it('event view and list query', () => {
    const view = {
      event_id: request.event_id,
      event_type: 'receivable.paid',
      url: 'https://erp.example.com/cb',
      status: 'dead',
      created_at: '2026-11-23T14:05:09.123Z',
      delivered_at: null,
      attempts: [
        {
          attempted_at: '2026-11-23T14:05:09.200Z',
          status_code: 500,
          error: null,
          duration_ms: 35,
          response_excerpt: '<h1>oops</h1>',
        },
        {
          attempted_at: '2026-11-23T14:05:14.300Z',
          status_code: null,
          error: 'ECONNREFUSED',
          duration_ms: 2,
          response_excerpt: null,
        },
      ],
      payload: request.payload,
    };
    const validateView = compileValidator(CallbackEventViewSchema);
    expect(validateView(view).ok).toBe(true);
    expect(validateView({ ...view, payload: null }).ok).toBe(true);
    expect(validateView({ ...view, status: 'failed' }).ok).toBe(false);
    // The payload is an object (the body sent) or null (a body that is not one); always present.
    const { payload: _omit, ...withoutPayload } = view;
    for (const [bad, path] of [
      [{ ...view, payload: 'x' }, '/payload'],
      [{ ...view, payload: [1] }, '/payload'],
      [withoutPayload, '/payload'],
    ] as const) {
      const r = validateView(bad);
      expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual([path]);
    }
    // Each attempt's excerpt: a string of at most MAX_RESPONSE_EXCERPT characters, or null; always present.
    const [first, second] = view.attempts;
    const { response_excerpt: _none, ...withoutExcerpt } = first!;
    const withAttempt = (a: object) => ({ ...view, attempts: [a, second] });
    expect(validateView(withAttempt({ ...first, response_excerpt: 'x'.repeat(MAX_RESPONSE_EXCERPT) })).ok).toBe(true);
    for (const bad of [
      { ...first, response_excerpt: 'x'.repeat(MAX_RESPONSE_EXCERPT + 1) },
      { ...first, response_excerpt: 1 },
      withoutExcerpt,
    ]) {
      const r = validateView(withAttempt(bad));
      expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual(['/attempts/0/response_excerpt']);
    }
    const query = compileValidator(CallbackListQuerySchema);
    expect(query({ status: 'dead', limit: 500 }).ok).toBe(true);
    expect(query({ limit: 501 }).ok).toBe(false);
    expect(query({ status: 'failed' }).ok).toBe(false);
  });
});
