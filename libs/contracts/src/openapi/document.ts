import { CallbackAttemptSchema, PaymentDataSchema } from '../callbacks';
import { ClientRefSchema, CreatedClientSchema } from '../clients';
import { ErrorCatalog, type ErrorCode } from '../errors';
import { FieldErrorSchema, PROBLEM_CONTENT_TYPE, ProblemSchema } from '../problem';
import { ReceivableLineItemSchema } from '../receivables';
import { EVENT_ID_PATTERN } from '../callbacks';
import { EventIds, Ids, problemExample } from './examples';
import {
  API_OPERATIONS,
  API_TAGS,
  API_WEBHOOKS,
  type ApiOperation,
  type ApiParameter,
  type ApiWebhook,
  type SuccessHeader,
} from './operations';
import { SchemaRegistry } from './schema-registry';
import type {
  ExampleObject,
  HeaderObject,
  OpenApiDocument,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SecurityRequirement,
} from './types';

/** Where the gateway serves the document and the page that renders it. */
export const OPENAPI_DOCUMENT_PATH = '/api/v1/openapi.json';
export const API_DOCS_PATH = '/docs';

export const OPENAPI_VERSION = '3.1.1';
const API_VERSION = '1.0.0';

const JSON_TYPE = 'application/json';

/** Reusable response headers (components/headers). */
type HeaderName = 'X-Request-Id' | 'Idempotent-Replayed' | 'Retry-After' | 'WWW-Authenticate' | SuccessHeader;

const HEADERS: Record<HeaderName, HeaderObject> = {
  'X-Request-Id': {
    description:
      'Identifies the request in the logs: the X-Request-Id you sent (1 to 128 of A-Z a-z 0-9 _ . : -) or a new UUID. Problems repeat it as request_id.',
    schema: { type: 'string' },
    example: Ids.request,
  },
  'Idempotent-Replayed': {
    description:
      'Present (true) when this is the stored answer of an earlier request with the same Idempotency-Key; nothing was done again. ' +
      'Successes are stored, and so are the 4xx the operation itself answered (e.g. 404, 409); refusals before it ran (authentication, ' +
      'Idempotency-Key, rate limit, input validation) and 5xx are not, so retrying those runs the request.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
  'X-Next-Cursor': {
    description: 'Present when more items remain: send it as `cursor` to get the next page.',
    schema: { type: 'string' },
    example: 'eyJlIjoiMjAyNi0wMi0yMCIsImlkIjoiOWIyZDdlMTAifQ',
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'string', pattern: '^\\d+$' },
    example: '1',
  },
  'WWW-Authenticate': {
    description: 'The Bearer challenge (RFC 6750).',
    schema: { type: 'string' },
    example: 'Bearer realm="api", error="invalid_token"',
  },
  'Cache-Control': {
    description: 'no-store on tokens; private, max-age=300 on booklet and slip downloads (PDF, QR code PNG).',
    schema: { type: 'string' },
    example: 'no-store',
  },
  'Content-Disposition': {
    description:
      'The download is shown inline, named after its payment_slip_id (booklet) or receivable_id (slip PDF, QR code PNG).',
    schema: { type: 'string' },
    example: `inline; filename="carne-${Ids.paymentSlip}.pdf"`,
  },
};

const headerRef = (name: HeaderName): ReferenceObject => ({ $ref: `#/components/headers/${name}` });

const IDEMPOTENCY_KEY_SCHEMA = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' };
const IDEMPOTENCY_KEY_DESCRIPTION =
  'Any unique string (e.g. a UUID), 1 to 255 printable ASCII characters. Scope: your tenant, kept 24 h. The same key with the same request ' +
  '(method, path, JSON body regardless of key order) replays the stored answer with Idempotent-Replayed: true; with another request, 422; ' +
  'while the first is still running, 409. Validation failures and 5xx answers are not stored.';

const PARAMETERS: Record<string, ParameterObject> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description: IDEMPOTENCY_KEY_DESCRIPTION,
    schema: IDEMPOTENCY_KEY_SCHEMA,
    example: '0b6f2c1e-7d4a-4f1b-9c3e-5a8d2f6b1c70',
  },
  IdempotencyKeyOptional: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: `Optional here. ${IDEMPOTENCY_KEY_DESCRIPTION}`,
    schema: IDEMPOTENCY_KEY_SCHEMA,
    example: '0b6f2c1e-7d4a-4f1b-9c3e-5a8d2f6b1c71',
  },
  WebhookId: {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id, the same on every attempt: use it to drop duplicates (delivery is at least once).',
    schema: { type: 'string', pattern: EVENT_ID_PATTERN },
    example: EventIds.registered,
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, Unix seconds. Refuse old ones (e.g. more than 5 minutes) to stop replays.',
    schema: { type: 'string', pattern: '^\\d{1,12}$' },
    example: '1771608730',
  },
  WebhookSignature: {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks signature: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">` keyed with the base64-decoded ' +
      "part after `whsec_` of your tenant's signing secret; several signatures are separated by spaces.",
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
};

const paramRef = (name: keyof typeof PARAMETERS): ReferenceObject => ({ $ref: `#/components/parameters/${name}` });

const DESCRIPTION = `ERP systems use this API to register their clients and issue Brazilian charges for them (hybrid bank slip with PIX, or PIX),
registered asynchronously with a payment provider and reported back by signed, retried callbacks (see **Webhooks**).

**Authentication.** An operator issues your integration token. \`POST /api/v1/authenticate\` exchanges it for a JWT access token,
sent as \`Authorization: Bearer <access token>\` to every other endpoint; renew it with \`POST /api/v1/refresh-token\` before it expires.

**Errors** are RFC 9457 \`application/problem+json\`: type, title, status, detail, a machine-readable \`code\`, the \`request_id\`, and
for validation \`errors: [{ path, message, in? }]\` naming every bad field by JSON pointer (\`/3/cnpj_cpf\` is the fourth item's tax id).
401 has the title \`UNAUTHORIZED\`. Any route answers 404 for an unknown path and 405 for a method it does not have.

**Idempotency-Key** is required on every endpoint that changes something (except authentication): send it again with the same
request to retry safely.

**Batches** (clients, receivables) hold 1 to 1,000 items and are all or nothing. Unknown fields are ignored.

**Rate limit:** per tenant; over it, 429 with \`Retry-After\`.`;

/**
 * The OpenAPI 3.1 document of the gateway's API, built from the contracts: every schema is the one the
 * gateway validates with, every example is typed with the contract type.
 */
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): OpenApiDocument {
  const registry = new SchemaRegistry({
    PaymentData: PaymentDataSchema,
    FieldError: FieldErrorSchema,
    CallbackAttempt: CallbackAttemptSchema,
    ClientRef: ClientRefSchema,
    CreatedClient: CreatedClientSchema,
    ReceivableLineItem: ReceivableLineItemSchema,
  });
  const paths: Record<string, PathItemObject> = {};
  for (const operation of API_OPERATIONS) {
    paths[operation.path] = { ...paths[operation.path], [operation.method]: operationObject(operation, registry) };
  }
  const webhooks: Record<string, PathItemObject> = {};
  for (const webhook of API_WEBHOOKS) webhooks[webhook.eventType] = { post: webhookObject(webhook, registry) };

  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Payments integration API',
      version: API_VERSION,
      summary: 'Clients, charges (bank slip and PIX), booklets and callbacks for ERPs',
      description: DESCRIPTION,
    },
    // Relative: resolved against wherever the document was fetched from, so it is right behind any proxy.
    servers: [{ url: options.serverUrl ?? '/', description: 'This gateway' }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    security: [{ accessToken: [] }],
    paths,
    webhooks,
    components: {
      schemas: registry.schemas(),
      securitySchemes: {
        accessToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The access token answered by /api/v1/authenticate or /api/v1/refresh-token.',
        },
        integrationToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The integration token issued by the operator (npm run admin -- tenant create). Secret: only /api/v1/authenticate takes it.',
        },
      },
      headers: { ...HEADERS },
      parameters: { ...PARAMETERS },
      examples: problemExamples(API_OPERATIONS),
    },
  };
}

function securityOf(operation: ApiOperation): SecurityRequirement[] {
  switch (operation.security) {
    case 'access_token':
      return [{ accessToken: [] }];
    case 'integration_token':
      return [{ integrationToken: [] }];
    case 'none':
      return [];
  }
}

function parameterObject(parameter: ApiParameter, where: 'path' | 'query', registry: SchemaRegistry): ParameterObject {
  return {
    name: parameter.name,
    in: where,
    required: parameter.required,
    description: parameter.description,
    schema: registry.use(parameter.schema),
    example: parameter.example,
  };
}

function operationObject(operation: ApiOperation, registry: SchemaRegistry): OperationObject {
  const parameters: Array<ParameterObject | ReferenceObject> = [
    ...(operation.pathParameters ?? []).map((p) => parameterObject(p, 'path', registry)),
    ...(operation.queryParameters ?? []).map((p) => parameterObject(p, 'query', registry)),
  ];
  if (operation.idempotency === 'required') parameters.push(paramRef('IdempotencyKey'));
  if (operation.idempotency === 'optional') parameters.push(paramRef('IdempotencyKeyOptional'));

  const body = operation.requestBody;
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    tags: [operation.tag],
    security: securityOf(operation),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            description: body.description,
            required: true,
            content: { [JSON_TYPE]: { schema: registry.use(body.schema), examples: body.examples } },
          },
        }
      : {}),
    responses: {
      [String(operation.success.status)]: successResponse(operation, registry),
      ...errorResponses(operation.errors, registry, operation.idempotency !== 'none'),
    },
  };
}

function successResponse(operation: ApiOperation, registry: SchemaRegistry): ResponseObject {
  const { success } = operation;
  const headers: Record<string, ReferenceObject> = { 'X-Request-Id': headerRef('X-Request-Id') };
  if (operation.idempotency !== 'none') headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
  for (const name of success.headers ?? []) headers[name] = headerRef(name);
  const schema = success.componentName
    ? registry.define(success.componentName, success.schema)
    : registry.use(success.schema);
  const media = success.examples ? { schema, examples: success.examples } : { schema };
  return { description: success.description, headers, content: { [success.mediaType ?? JSON_TYPE]: media } };
}

/** Problem examples are shared by many routes: each is written once, under components/examples. */
const problemExampleName = (code: ErrorCode) => `problem_${code}`;
const problemExampleRef = (code: ErrorCode): ReferenceObject => ({
  $ref: `#/components/examples/${problemExampleName(code)}`,
});

/** The examples of the codes some operation answers (an unused example would be dead weight). */
function problemExamples(operations: readonly ApiOperation[]): Record<string, ExampleObject> {
  const codes = [...new Set(operations.flatMap((operation) => Object.keys(operation.errors) as ErrorCode[]))].sort();
  return Object.fromEntries(codes.map((code) => [problemExampleName(code), problemExample(code)]));
}

/** One problem+json response per status, listing each code the route answers with it and when. */
/** Codes an operation's handler answers, which the Idempotency-Key layer stores and replays (input is validated before it). */
const REPLAYED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['not_found', 'conflict', 'gone']);

function errorResponses(
  errors: Partial<Record<ErrorCode, string>>,
  registry: SchemaRegistry,
  idempotent: boolean,
): Record<string, ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(errors) as ErrorCode[]) {
    const { status } = ErrorCatalog[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const problem = registry.use(ProblemSchema);
  const responses: Record<string, ResponseObject> = {};
  for (const [status, codes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const headers: Record<string, ReferenceObject> = { 'X-Request-Id': headerRef('X-Request-Id') };
    if (status === 401) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
    if (status === 429 || status === 503) headers['Retry-After'] = headerRef('Retry-After');
    if (idempotent && codes.some((code) => REPLAYED_CODES.has(code)))
      headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${errors[code]}`).join('; '),
      headers,
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: problem,
          examples: Object.fromEntries(codes.map((code) => [code, problemExampleRef(code)])),
        },
      },
    };
  }
  return responses;
}

function webhookObject(webhook: ApiWebhook, registry: SchemaRegistry): OperationObject {
  return {
    operationId: `on${webhook.eventType
      .split(/[._]/)
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('')}`,
    summary: webhook.summary,
    description:
      `${webhook.description}\n\nPOSTed as JSON to the url_callback you gave, signed per Standard Webhooks. Any 2xx within 10 s acknowledges it; ` +
      'otherwise it is retried about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h and 24 h later, then kept as dead (see GET /api/v1/callbacks). ' +
      'Redirects are not followed.',
    tags: ['Callbacks'],
    security: [],
    parameters: [paramRef('WebhookId'), paramRef('WebhookTimestamp'), paramRef('WebhookSignature')],
    requestBody: {
      required: true,
      content: {
        [JSON_TYPE]: { schema: registry.use(webhook.schema), examples: { [webhook.eventType]: webhook.example } },
      },
    },
    responses: {
      '2XX': { description: 'Acknowledged: the event is not sent again.' },
      default: {
        description: 'Not acknowledged (as is a timeout or a refused connection): the event is retried later.',
      },
    },
  };
}
