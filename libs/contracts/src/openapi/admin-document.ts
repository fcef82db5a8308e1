import type { TSchema } from '@sinclair/typebox';
import {
  ADMIN_IDEMPOTENCY_HEADER,
  ADMIN_IDEMPOTENCY_TTL_HOURS,
  ADMIN_MAX_PAGE,
  AdminAuditPageSchema,
  AdminDeadLetterDetailSchema,
  AdminDeadLetterListSchema,
  AdminDiscardResultSchema,
  AdminIssuedTokenSchema,
  AdminNewTenantSchema,
  AdminProviderAccountRequestSchema,
  AdminProviderAccountSchema,
  AdminRedriveResultSchema,
  AdminRevokedTokenSchema,
  AdminRotatedSecretSchema,
  AdminRotateSecretRequestSchema,
  AdminTenantCreateRequestSchema,
  AdminTenantListSchema,
  AdminTenantStatusSchema,
  AdminTokenListSchema,
} from '../admin';
import { INVITATION_TOKEN_PATTERN } from '../console-sessions';
import { DeliveryHealthSchema, DeliveryStatsSchema } from '../delivery-stats';
import { ErrorCatalog, type ErrorCode } from '../errors';
import { RegistrationHealthSchema } from '../registration-health';
import { RegistrationStatsSchema, STATS_WINDOW_NAMES } from '../stats';
import { PROBLEM_CONTENT_TYPE, ProblemSchema } from '../problem';
import { OPENAPI_VERSION } from './document';
import { CONSOLE_SESSION_OPERATIONS } from './console-sessions-document';
import { SchemaRegistry } from './schema-registry';
import type {
  HttpMethod,
  OpenApiDocument,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ResponseObject,
} from './types';

/**
 * The admin API's own OpenAPI document, served on the admin port only (ADMIN_OPENAPI_DOCUMENT_PATH):
 * a second document rather than a tag in the public one, so the public document (and the SDK built
 * from it) never lists a route the public port does not serve.
 */
export interface AdminOperation {
  method: HttpMethod;
  /** OpenAPI template; parameter names are the gateway's route parameter names. */
  path: string;
  operationId: string;
  summary: string;
  pathParameters?: string[];
  queryParameters?: ParameterObject[];
  requestBody?: TSchema;
  /** Answers a secret: takes an optional Idempotency-Key, and a repeat with it replays the first answer. */
  idempotent?: true;
  /**
   * Who may call it: an operator credential (the default); a console session or an operator
   * credential; a console session only; anyone (sign-in, an invitation by its token).
   */
  access?: 'session_or_operator' | 'session' | 'none';
  success: { status: 200 | 201 | 204; description: string; schema?: TSchema };
  /** Besides unauthorized, which every operation answers. */
  errors: Partial<Record<ErrorCode, string>>;
}

const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  tenant_id: 'The tenant (a UUID).',
  token_id: 'The integration token (its id, a UUID; never the token).',
  dead_letter_id: 'The dead letter, as the list answers its id.',
  user_id: 'The console user (a UUID).',
  invitation_token: 'The invitation token (inv_...), as the invitation link carries it.',
};

const BAD_INPUT = 'a field is missing or invalid: errors names each';
const NO_TENANT = 'no such tenant';
/** What an operation answering a secret may answer about its Idempotency-Key. */
const KEY_ERRORS: Partial<Record<ErrorCode, string>> = {
  idempotency_key_invalid: 'the Idempotency-Key is not 1 to 255 printable ASCII characters',
  idempotency_key_reused: 'this Idempotency-Key was used with another body: nothing done',
  idempotency_request_in_progress: 'a request with this Idempotency-Key is still running: nothing done',
};

export const ADMIN_OPERATIONS: readonly AdminOperation[] = [
  {
    method: 'get',
    path: '/admin/v1/tenants',
    operationId: 'adminListTenants',
    summary: 'Every tenant, with its number of active integration tokens',
    success: { status: 200, description: 'The tenants, oldest first.', schema: AdminTenantListSchema },
    errors: {},
  },
  {
    method: 'post',
    path: '/admin/v1/tenants',
    operationId: 'adminCreateTenant',
    summary: 'A new tenant; its integration token and signing secret are answered once',
    requestBody: AdminTenantCreateRequestSchema,
    idempotent: true,
    success: { status: 201, description: 'Created. Store the token and the secret now.', schema: AdminNewTenantSchema },
    errors: { validation_failed: BAD_INPUT, ...KEY_ERRORS },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenant_id}/disable',
    operationId: 'adminDisableTenant',
    summary: 'Refuse every token and JWT of a tenant from now on (its data stays)',
    pathParameters: ['tenant_id'],
    success: { status: 200, description: 'Disabled.', schema: AdminTenantStatusSchema },
    errors: { validation_failed: BAD_INPUT, not_found: 'no such active tenant' },
  },
  {
    method: 'get',
    path: '/admin/v1/tenants/{tenant_id}/tokens',
    operationId: 'adminListTokens',
    summary: "A tenant's integration tokens (hints only, never a token)",
    pathParameters: ['tenant_id'],
    success: { status: 200, description: 'The tokens, oldest first.', schema: AdminTokenListSchema },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenant_id}/tokens',
    operationId: 'adminIssueToken',
    summary: 'Issue another integration token, answered once',
    pathParameters: ['tenant_id'],
    idempotent: true,
    success: { status: 201, description: 'Issued. Store it now.', schema: AdminIssuedTokenSchema },
    errors: { validation_failed: BAD_INPUT, not_found: NO_TENANT, conflict: 'the tenant is disabled', ...KEY_ERRORS },
  },
  {
    method: 'post',
    path: '/admin/v1/tokens/{token_id}/revoke',
    operationId: 'adminRevokeToken',
    summary: 'Revoke an integration token: JWTs issued from it stop working at once',
    pathParameters: ['token_id'],
    success: { status: 200, description: 'Revoked.', schema: AdminRevokedTokenSchema },
    errors: { validation_failed: BAD_INPUT, not_found: 'no active token with this id' },
  },
  {
    method: 'get',
    path: '/admin/v1/tenants/{tenant_id}/provider-account',
    operationId: 'adminShowProviderAccount',
    summary: "The tenant's current provider account (credentials only as set or none)",
    pathParameters: ['tenant_id'],
    success: { status: 200, description: 'The account.', schema: AdminProviderAccountSchema },
    errors: { validation_failed: BAD_INPUT, not_found: 'no such tenant, or it has no provider account' },
  },
  {
    method: 'put',
    path: '/admin/v1/tenants/{tenant_id}/provider-account',
    operationId: 'adminSetProviderAccount',
    summary: "Set the tenant's provider account, for charges accepted from now on",
    pathParameters: ['tenant_id'],
    requestBody: AdminProviderAccountRequestSchema,
    success: { status: 200, description: 'The new current account.', schema: AdminProviderAccountSchema },
    errors: { validation_failed: BAD_INPUT, not_found: NO_TENANT },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenant_id}/signing-secret/rotate',
    operationId: 'adminRotateSigningSecret',
    summary: 'A new webhook signing secret, answered once; the old one still signs until previous_valid_until',
    pathParameters: ['tenant_id'],
    requestBody: AdminRotateSecretRequestSchema,
    idempotent: true,
    success: {
      status: 200,
      description: 'Rotated; answered once every callback-svc instance signs with the new secret.',
      schema: AdminRotatedSecretSchema,
    },
    errors: {
      validation_failed: BAD_INPUT,
      not_found: NO_TENANT,
      rotation_overlap_running:
        'the previous rotation’s overlap is still running (detail and errors name its end) and confirm_overlap is not true: nothing rotated',
      ...KEY_ERRORS,
    },
  },
  {
    method: 'get',
    path: '/admin/v1/dead-letters',
    operationId: 'adminListDeadLetters',
    summary: 'Jobs whose handler failed JOB_MAX_FAILURES times, or poison messages, oldest first, a page at a time',
    queryParameters: [cursorParameter('next_cursor of the previous page (the last id it listed).'), limitParameter()],
    success: { status: 200, description: 'A page of the dead letters.', schema: AdminDeadLetterListSchema },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'get',
    path: '/admin/v1/dead-letters/{dead_letter_id}',
    operationId: 'adminShowDeadLetter',
    summary: 'One dead letter with its body (the message as published)',
    pathParameters: ['dead_letter_id'],
    success: { status: 200, description: 'The dead letter and its payload.', schema: AdminDeadLetterDetailSchema },
    errors: { validation_failed: BAD_INPUT, not_found: 'no such dead letter' },
  },
  {
    method: 'post',
    path: '/admin/v1/dead-letters/{dead_letter_id}/discard',
    operationId: 'adminDiscardDeadLetter',
    summary: 'Remove a dead letter without publishing it again (audited as jobs.discard)',
    pathParameters: ['dead_letter_id'],
    success: { status: 200, description: 'Discarded.', schema: AdminDiscardResultSchema },
    errors: { validation_failed: BAD_INPUT, not_found: 'no such dead letter (discarded or re-driven already)' },
  },
  {
    method: 'post',
    path: '/admin/v1/dead-letters/{dead_letter_id}/redrive',
    operationId: 'adminRedriveDeadLetter',
    summary: 'Publish a dead letter again to its stream, and remove it',
    pathParameters: ['dead_letter_id'],
    success: { status: 200, description: 'Published again.', schema: AdminRedriveResultSchema },
    errors: {
      validation_failed: BAD_INPUT,
      not_found: 'no such dead letter',
      redrive_refused: 'its stream or subject is not a job stream of this bus: not re-driven, audited',
    },
  },
  {
    method: 'get',
    path: '/admin/v1/audit',
    operationId: 'adminListAudit',
    summary: 'Who changed what, and when: newest first, filtered, a page at a time',
    queryParameters: [
      {
        name: 'tenant_id',
        in: 'query',
        required: false,
        description: 'Only the actions on this tenant.',
        schema: { type: 'string', format: 'uuid' },
      },
      {
        name: 'action',
        in: 'query',
        required: false,
        description:
          'Only this action (tenant.create, jobs.discard, ...), or every action of a group ending in a dot (jobs.).',
        schema: { type: 'string', pattern: '^[a-z][a-z.-]{0,63}$' },
      },
      {
        name: 'operator',
        in: 'query',
        required: false,
        description: 'Only what this operator did: the name recorded, or a console user’s e-mail (any case).',
        schema: { type: 'string', minLength: 1, maxLength: 200 },
      },
      {
        name: 'since',
        in: 'query',
        required: false,
        description: 'Only rows at or after this time (ISO 8601 with a zone).',
        schema: { type: 'string', format: 'date-time' },
      },
      {
        name: 'until',
        in: 'query',
        required: false,
        description: 'Only rows before this time (ISO 8601 with a zone).',
        schema: { type: 'string', format: 'date-time' },
      },
      cursorParameter('next_cursor of the previous page.'),
      limitParameter(),
    ],
    success: { status: 200, description: 'A page of the audit.', schema: AdminAuditPageSchema },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'get',
    path: '/admin/v1/stats/registrations',
    operationId: 'adminRegistrationStats',
    summary:
      'Charges registered with the provider, and refused by it for good (rejected), per bucket: every bucket, oldest first',
    queryParameters: statsQueryParameters(),
    success: {
      status: 200,
      description: 'The series; the last bucket holds now (at most ~15 s stale).',
      schema: RegistrationStatsSchema,
    },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'get',
    path: '/admin/v1/stats/deliveries',
    operationId: 'adminDeliveryStats',
    summary:
      'Callback attempts delivered (2xx) and failed, events given up (dead), p50/p99 attempt durations (the receiver’s answer time) and p50/p99 end-to-end latency (event created to delivered) per bucket: every bucket, oldest first',
    queryParameters: statsQueryParameters(),
    success: {
      status: 200,
      description: 'The series; the last bucket holds now (at most ~15 s stale).',
      schema: DeliveryStatsSchema,
    },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'get',
    path: '/admin/v1/delivery-health',
    operationId: 'adminDeliveryHealth',
    summary:
      'Callback delivery per tenant and per receiving host over the window, worst first (lowest success rate, then most failed), with events pending now',
    queryParameters: statsQueryParameters().filter((q) => q.name === 'window'),
    success: {
      status: 200,
      description: 'Tenants and hosts. last_error is the receiver’s text: show it escaped.',
      schema: DeliveryHealthSchema,
    },
    errors: { validation_failed: BAD_INPUT },
  },
  {
    method: 'get',
    path: '/admin/v1/registration-health',
    operationId: 'adminRegistrationHealth',
    summary:
      'Charges waiting for their bank to take them, per bank account, the longest waiting first: how many, how many for longer than stuck_after_seconds, the oldest one’s age and the bank’s last answer',
    success: {
      status: 200,
      description:
        'The bank accounts with charges waiting now (at most 200). last_error may quote the bank: show it escaped.',
      schema: RegistrationHealthSchema,
    },
    errors: {},
  },
];

/** ?window and ?tenant_id of the statistics. */
function statsQueryParameters(): ParameterObject[] {
  return [
    {
      name: 'window',
      in: 'query',
      required: false,
      description: 'hour (default): 60 buckets of 60 s; day: 96 buckets of 900 s.',
      schema: { type: 'string', enum: [...STATS_WINDOW_NAMES], default: 'hour' },
    },
    {
      name: 'tenant_id',
      in: 'query',
      required: false,
      description: "Only this tenant's; every tenant's without it.",
      schema: { type: 'string', format: 'uuid' },
    },
  ];
}

function idempotencyKeyParameter(): ParameterObject {
  return {
    name: ADMIN_IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    description: `Optional. The first answer (a secret) is kept sealed for ${ADMIN_IDEMPOTENCY_TTL_HOURS} h, per operator, key and route: a repeat with the same key and body answers it again (header Idempotent-Replayed: true) and does nothing.`,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  };
}

function cursorParameter(description: string): ParameterObject {
  return {
    name: 'cursor',
    in: 'query',
    required: false,
    description,
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
  };
}

function limitParameter(): ParameterObject {
  return {
    name: 'limit',
    in: 'query',
    required: false,
    description: `At most this many rows (1 to ${ADMIN_MAX_PAGE}; default 100).`,
    schema: { type: 'integer', minimum: 1, maximum: ADMIN_MAX_PAGE },
  };
}

const DESCRIPTION = `The operators' API of the gateway: tenants, integration tokens, provider accounts, signing secrets, dead-lettered
jobs and the audit log. It is served on the gateway's admin port (ADMIN_PORT), never on the public one; keep that port private.

**Authentication:** \`Authorization: Bearer <operator credential>\`, made with \`npm run admin -- operator create --name <name>\`
(shown once). Tenants' integration tokens and JWTs are refused here, and operator credentials are refused on the public API.

Every change is written to the audit log under the operator's name. Secrets (integration tokens, signing secrets) are answered
once, by the call that makes them, and never listed. Errors are \`application/problem+json\` as on the public API.`;

/** The admin API's document, built from ADMIN_OPERATIONS and the contracts' schemas. */
export function buildAdminOpenApiDocument(): OpenApiDocument {
  const registry = new SchemaRegistry();
  const paths: Record<string, PathItemObject> = {};
  for (const operation of [...ADMIN_OPERATIONS, ...CONSOLE_SESSION_OPERATIONS])
    paths[operation.path] = { ...paths[operation.path], [operation.method]: operationObject(operation, registry) };
  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: { title: 'Payments admin API', version: '1.0.0', description: DESCRIPTION },
    servers: [{ url: '/', description: "This gateway's admin port" }],
    tags: [{ name: 'admin', description: 'Operator actions (admin port only).' }],
    security: [{ operatorCredential: [] }],
    paths,
    webhooks: {},
    components: {
      schemas: registry.schemas(),
      securitySchemes: {
        operatorCredential: {
          type: 'http',
          scheme: 'bearer',
          description: 'An operator credential (opk_...), from npm run admin -- operator create.',
        },
        consoleSession: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: '`Session <session_id>`: a console session, as POST /admin/v1/sessions answered it.',
        },
      },
      headers: {},
      parameters: {},
      examples: {},
    },
  };
}

function operationObject(operation: AdminOperation, registry: SchemaRegistry): OperationObject {
  const parameters: ParameterObject[] = [
    ...(operation.pathParameters ?? []).map((name): ParameterObject => ({
      name,
      in: 'path',
      required: true,
      description: PARAMETER_DESCRIPTIONS[name] ?? name,
      schema: parameterSchema(name),
    })),
    ...(operation.queryParameters ?? []),
    ...(operation.idempotent ? [idempotencyKeyParameter()] : []),
  ];
  const access = operation.access ?? 'operator';
  const errors: Partial<Record<ErrorCode, string>> = {
    ...(access === 'none' ? {} : { unauthorized: UNAUTHORIZED[access] }),
    ...operation.errors,
  };
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    tags: ['admin'],
    security: SECURITY[access],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.requestBody
      ? {
          requestBody: {
            required: operation.method === 'put' || operation.operationId === 'adminCreateTenant',
            content: { 'application/json': { schema: registry.use(operation.requestBody) } },
          },
        }
      : {}),
    responses: {
      [String(operation.success.status)]: {
        description: operation.success.description,
        ...(operation.success.schema
          ? { content: { 'application/json': { schema: registry.use(operation.success.schema) } } }
          : {}),
      },
      ...errorResponses(errors, registry),
    },
  };
}

type Access = NonNullable<AdminOperation['access']> | 'operator';

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  operator: [{ operatorCredential: [] }],
  session_or_operator: [{ consoleSession: [] }, { operatorCredential: [] }],
  session: [{ consoleSession: [] }],
  none: [],
};

const UNAUTHORIZED: Record<Exclude<Access, 'none'>, string> = {
  operator: 'no operator credential, or one unknown or revoked (a tenant token or JWT is refused too)',
  session_or_operator: 'no console session nor operator credential, or an unknown or revoked credential',
  session: 'no `Authorization: Session <session_id>` header',
};

function parameterSchema(name: string): ParameterObject['schema'] {
  if (name === 'dead_letter_id') return { type: 'integer', minimum: 1 };
  if (name === 'invitation_token') return { type: 'string', pattern: INVITATION_TOKEN_PATTERN };
  return { type: 'string', format: 'uuid' };
}

function errorResponses(
  errors: Partial<Record<ErrorCode, string>>,
  registry: SchemaRegistry,
): Record<string, ResponseObject> {
  const byStatus = new Map<number, string[]>();
  for (const [code, when] of Object.entries(errors) as Array<[ErrorCode, string]>) {
    const { status } = ErrorCatalog[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), `\`${code}\`: ${when}`]);
  }
  const problem = registry.use(ProblemSchema);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, texts]) => [
        String(status),
        { description: texts.join('; '), content: { [PROBLEM_CONTENT_TYPE]: { schema: problem } } },
      ]),
  );
}
