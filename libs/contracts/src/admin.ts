import { Type, type Static } from '@sinclair/typebox';
import { OptionalText, RequiredText, Uuid } from './common';

/**
 * The gateway's admin API: served on ADMIN_PORT only, never on the public port, to
 * operators holding an operator credential (`npm run admin -- operator create`). Every shape it takes
 * and answers is here; its OpenAPI document is built from them (openapi/admin-document.ts).
 */
export const ADMIN_API_PREFIX = '/admin/v1';
export const ADMIN_OPENAPI_DOCUMENT_PATH = `${ADMIN_API_PREFIX}/openapi.json`;

/** Operator credentials: `opk_` + 256 random bits, shown once, stored as SHA-256 (like integration tokens). */
export const OPERATOR_CREDENTIAL_PREFIX = 'opk_';

/** At most this many rows per page of the audit and of the dead letters. */
export const ADMIN_MAX_PAGE = 1000;

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const NullableTimestamp = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/* Requests ---------------------------------------------------------------------------------------- */

export const AdminTenantCreateRequestSchema = Type.Object(
  { name: RequiredText(200, "The tenant's name, as operators and the console show it.") },
  { $id: 'AdminTenantCreateRequest' },
);
export type AdminTenantCreateRequest = Static<typeof AdminTenantCreateRequestSchema>;

export const AdminProviderAccountRequestSchema = Type.Object(
  {
    provider: Type.Union([Type.Literal('sandbox'), Type.Literal('inter'), Type.Literal('pix')]),
    beneficiary: Type.Object({
      name: RequiredText(200),
      tax_id: RequiredText(200, 'CNPJ or CPF (check digits; punctuation optional)'),
      city: OptionalText(200),
      pix_key: OptionalText(77, {
        description:
          'The PIX key charges are issued to: required for pix; an inter account without one issues slips only (PIX charges get 422 pix_key_required)',
      }),
      agency: OptionalText(200),
      account: OptionalText(200),
    }),
    /** inter: its API root (optional); pix: the PIX API root (required). */
    base_url: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          "inter: its API root (the service's default when absent); pix: the bank's PIX API root (the CLI's --pix-api-url), required. https only in production for pix",
      }),
    ),
    /** inter and pix: client_id, client_secret, cert_pem and key_pem; pix also token_url. Write-only: never answered. */
    credentials: Type.Optional(
      Type.Object({
        client_id: Type.String({ maxLength: 200 }),
        client_secret: Type.String({ maxLength: 10_000 }),
        cert_pem: Type.String({ maxLength: 100_000 }),
        key_pem: Type.String({ maxLength: 100_000 }),
        token_url: Type.Optional(
          Type.String({
            maxLength: 2000,
            description: "pix only, and required there: where the bank issues OAuth2 tokens (the CLI's --token-url)",
          }),
        ),
        replace_webhook: Type.Optional(
          Type.Boolean({
            description:
              "point the bank's webhook at this service even when it is set to another URL (the CLI's --replace-webhook); otherwise that URL is kept",
          }),
        ),
      }),
    ),
  },
  { $id: 'AdminProviderAccountRequest' },
);
export type AdminProviderAccountRequest = Static<typeof AdminProviderAccountRequestSchema>;

export const AdminRotateSecretRequestSchema = Type.Object(
  {
    overlap_hours: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 720,
        description: 'How long the old secret still signs too (fractional; 0 ends it at once). Default 24.',
      }),
    ),
    confirm_overlap: Type.Optional(
      Type.Boolean({
        description:
          'Rotate even though the previous rotation’s overlap is still running (the secret before it then stops at once). Without it, such a rotation is 409 rotation_overlap_running naming the end of the overlap.',
      }),
    ),
  },
  { $id: 'AdminRotateSecretRequest' },
);
export type AdminRotateSecretRequest = Static<typeof AdminRotateSecretRequestSchema>;

/**
 * The header that makes the admin calls answering a secret (create tenant, issue token, rotate the
 * signing secret) safe to repeat: the first answer is kept sealed for ADMIN_IDEMPOTENCY_TTL_HOURS and
 * replayed, per operator, key and route (docs/api.md, "Idempotency").
 */
export const ADMIN_IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const ADMIN_IDEMPOTENCY_TTL_HOURS = 24;

/* Answers ----------------------------------------------------------------------------------------- */

export const AdminTenantSchema = Type.Object(
  {
    tenant_id: Uuid(),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    created_at: Timestamp('ISO 8601'),
    active_tokens: Type.Integer({ minimum: 0 }),
    previous_secret_valid_until: NullableTimestamp(
      'While a rotation’s overlap runs: until then the signing secret before the last rotation is still accepted (callbacks carry both signatures). Null otherwise.',
    ),
  },
  { $id: 'AdminTenant' },
);
export type AdminTenant = Static<typeof AdminTenantSchema>;

export const AdminTenantListSchema = Type.Object({ items: Type.Array(AdminTenantSchema) }, { $id: 'AdminTenantList' });

export const AdminNewTenantSchema = Type.Object(
  {
    tenant_id: Uuid(),
    name: Type.String(),
    token_id: Uuid(),
    integration_token: Type.String({ description: 'Shown once: never again.' }),
    signing_secret: Type.String({ description: 'Shown once: never again.' }),
  },
  { $id: 'AdminNewTenant' },
);

export const AdminTenantStatusSchema = Type.Object(
  { tenant_id: Uuid(), status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]) },
  { $id: 'AdminTenantStatus' },
);

export const AdminTokenSchema = Type.Object(
  {
    token_id: Uuid(),
    token_hint: Type.String({ description: 'The first characters, to tell tokens apart; never the token.' }),
    created_at: Timestamp('ISO 8601'),
    revoked_at: NullableTimestamp('ISO 8601, or null while active'),
    last_used_at: NullableTimestamp('ISO 8601, or null if never used'),
  },
  { $id: 'AdminToken' },
);
export type AdminToken = Static<typeof AdminTokenSchema>;

export const AdminTokenListSchema = Type.Object({ items: Type.Array(AdminTokenSchema) }, { $id: 'AdminTokenList' });

export const AdminIssuedTokenSchema = Type.Object(
  {
    tenant_id: Uuid(),
    token_id: Uuid(),
    integration_token: Type.String({ description: 'Shown once: never again.' }),
  },
  { $id: 'AdminIssuedToken' },
);

export const AdminRevokedTokenSchema = Type.Object(
  { tenant_id: Uuid(), token_id: Uuid(), revoked: Type.Literal(true) },
  { $id: 'AdminRevokedToken' },
);

export const AdminProviderAccountSchema = Type.Object(
  {
    tenant_id: Uuid(),
    account_id: Uuid(),
    provider: Type.Union([Type.Literal('sandbox'), Type.Literal('inter'), Type.Literal('pix')]),
    beneficiary: Type.Object({
      name: Type.String(),
      tax_id: Type.String(),
      city: Type.Union([Type.String(), Type.Null()]),
      pix_key: Type.Union([Type.String(), Type.Null()]),
      agency: Type.Union([Type.String(), Type.Null()]),
      account: Type.Union([Type.String(), Type.Null()]),
      address: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    }),
    base_url: Type.Union([Type.String(), Type.Null()]),
    credentials: Type.Union([Type.Literal('set'), Type.Literal('none')], {
      description: 'Whether credentials are stored; they are never answered.',
    }),
    created_at: Timestamp('ISO 8601'),
  },
  { $id: 'AdminProviderAccount' },
);

export const AdminRotatedSecretSchema = Type.Object(
  {
    tenant_id: Uuid(),
    signing_secret: Type.String({ description: 'Shown once: never again.' }),
    previous_valid_until: Timestamp(
      'Until then the previous secret is still accepted: callbacks carry its signature too (the rotation’s own time for an overlap of 0).',
    ),
  },
  { $id: 'AdminRotatedSecret' },
);

export const AdminDeadLetterSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'What redrive takes.' }),
    stream: Type.String(),
    subject: Type.String(),
    msg_id: Type.String(),
    error: Type.String(),
    failures: Type.Integer({ minimum: 0 }),
    dead_lettered_at: Timestamp('ISO 8601'),
    bytes: Type.Integer({ minimum: 0 }),
  },
  { $id: 'AdminDeadLetter' },
);

export const AdminDeadLetterListSchema = Type.Object(
  {
    items: Type.Array(AdminDeadLetterSchema),
    next_cursor: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'Send it as `cursor` for the next page (later dead letters); null when this page is the last.',
      }),
    ),
  },
  { $id: 'AdminDeadLetterList' },
);

/** At most this many bytes of a dead letter's body are answered by its detail; `payload_truncated` says when cut. */
export const DEAD_LETTER_PAYLOAD_MAX_BYTES = 64 * 1024;

export const AdminDeadLetterDetailSchema = Type.Object(
  {
    dead_letter: AdminDeadLetterSchema,
    payload_encoding: Type.Union([Type.Literal('utf8'), Type.Literal('base64')], {
      description: 'utf8 when the body is UTF-8 text (a job is JSON), else base64.',
    }),
    payload: Type.String({
      description:
        'The original message body as published (JSON re-indented when it parses). It may hold a payer’s data: show it escaped.',
    }),
    payload_truncated: Type.Boolean({ description: `Cut at ${DEAD_LETTER_PAYLOAD_MAX_BYTES} bytes.` }),
  },
  { $id: 'AdminDeadLetterDetail' },
);
export type AdminDeadLetterDetail = Static<typeof AdminDeadLetterDetailSchema>;

export const AdminDiscardResultSchema = Type.Object(
  { id: Type.Integer({ minimum: 1 }), discarded: Type.Literal(true) },
  { $id: 'AdminDiscardResult' },
);

export const AdminRedriveResultSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    stream: Type.String(),
    msg_id: Type.String(),
    duplicate: Type.Boolean({ description: 'The stream had that message id already (a second redrive).' }),
  },
  { $id: 'AdminRedriveResult' },
);

export const AdminAuditEntrySchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    at: Timestamp('ISO 8601'),
    operator: Type.String({
      description:
        'The operator who did it (for the admin API, the credential’s name; for the console, the user’s e-mail).',
    }),
    action: Type.String(),
    tenant_id: Type.Union([Uuid(), Type.Null()]),
    details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
    // Where an action came from (the gateway answers them all; null on rows older than these fields).
    source: Type.Optional(
      Type.Union(
        [Type.Literal('console'), Type.Literal('admin_api'), Type.Literal('cli'), Type.Literal('code'), Type.Null()],
        { description: 'Where the action came from: the console, the admin API, the admin CLI or code.' },
      ),
    ),
    address: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The client address.' })),
    request_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The X-Request-Id.' })),
    user_id: Type.Optional(
      Type.Union([Uuid(), Type.Null()], { description: 'The console user, if signed in as one.' }),
    ),
    user_email: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'The console user’s e-mail (for a refused sign-in, the e-mail tried).',
      }),
    ),
  },
  { $id: 'AdminAuditEntry' },
);

export const AdminAuditPageSchema = Type.Object(
  {
    items: Type.Array(AdminAuditEntrySchema),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Send it as `cursor` for the next (older) page; null when this page is the last.',
    }),
  },
  { $id: 'AdminAuditPage' },
);
