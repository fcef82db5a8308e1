import { Type } from '@sinclair/typebox';
import {
  API_OPERATIONS,
  API_WEBHOOKS,
  buildOpenApiDocument,
  CallbackEventTypes,
  createAjv,
  ErrorCatalog,
  type ErrorCode,
} from '../src';
import { SchemaRegistry } from '../src/openapi/schema-registry';

describe('SchemaRegistry', () => {
  const Inner = Type.Object({ a: Type.String() }, { $id: 'Inner' });
  const Outer = Type.Object({ inner: Type.Optional(Inner), list: Type.Array(Inner) }, { $id: 'Outer' });

  it('turns schemas with an $id into components referenced by $ref, nested ones included, and drops $id', () => {
    const registry = new SchemaRegistry();
    expect(registry.use(Outer)).toEqual({ $ref: '#/components/schemas/Outer' });
    const schemas = registry.schemas();
    expect(Object.keys(schemas)).toEqual(['Inner', 'Outer']);
    expect(schemas.Outer).toEqual({
      type: 'object',
      required: ['list'],
      properties: {
        inner: { $ref: '#/components/schemas/Inner' },
        list: { type: 'array', items: { $ref: '#/components/schemas/Inner' } },
      },
    });
    expect(JSON.stringify(schemas)).not.toContain('$id');
  });

  it('names schemas without an $id by their content, and leaves other schemas inline', () => {
    const Point = Type.Object({ x: Type.Number(), y: Type.Number() });
    const registry = new SchemaRegistry({ Point });
    expect(registry.use(Type.Object({ at: Type.Optional(Point), label: Type.String() }))).toEqual({
      type: 'object',
      required: ['label'],
      properties: { at: { $ref: '#/components/schemas/Point' }, label: { type: 'string' } },
    });
  });

  it('writes a union of literals as an enum', () => {
    const registry = new SchemaRegistry();
    expect(registry.use(Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'd' }))).toEqual({
      type: 'string',
      enum: ['a', 'b'],
      description: 'd',
    });
    expect(registry.use(Type.Union([Type.Literal(1), Type.Literal('b')]))).toEqual({
      anyOf: [
        { const: 1, type: 'number' },
        { const: 'b', type: 'string' },
      ],
    });
  });

  it('refuses two different schemas under one name', () => {
    const registry = new SchemaRegistry();
    registry.use(Type.Object({ a: Type.String() }, { $id: 'Same' }));
    expect(() => registry.use(Type.Object({ b: Type.String() }, { $id: 'Same' }))).toThrow(/Same/);
  });
});

describe('the API operations list', () => {
  it('has one operation per method and path, and unique operation ids', () => {
    const keys = API_OPERATIONS.map((o) => `${o.method} ${o.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const ids = API_OPERATIONS.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents a webhook for every callback event type', () => {
    expect(API_WEBHOOKS.map((w) => w.eventType).sort()).toEqual([...CallbackEventTypes].sort());
  });

  it('answers 401 on every route that takes a token, and uses only catalogued error codes', () => {
    for (const operation of API_OPERATIONS) {
      for (const code of Object.keys(operation.errors)) expect(Object.keys(ErrorCatalog)).toContain(code);
      if (operation.security !== 'none') expect(operation.errors).toHaveProperty('unauthorized' satisfies ErrorCode);
    }
  });
});

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument();

  it('is OpenAPI 3.1 with its JSON Schema dialect', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.jsonSchemaDialect).toBe('https://spec.openapis.org/oas/3.1/dialect/base');
    expect(doc.servers).toEqual([{ url: '/', description: 'This gateway' }]);
  });

  it('validates a contract payload through its component with the contracts ajv', () => {
    const ajv = createAjv();
    ajv.addSchema(JSON.parse(JSON.stringify(doc)) as object, 'doc');
    const validate = ajv.compile({ $ref: 'doc#/components/schemas/ClientsCreateRequest' });
    expect(
      validate([
        { client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60', name: 'Maria da Silva', cnpj_cpf: '529.982.247-25' },
      ]),
    ).toBe(true);
    expect(
      validate([
        { client_id: '7f1c2a3e-0b4d-4c5e-8f6a-1b2c3d4e5f60', name: 'Maria da Silva', cnpj_cpf: '529.982.247-26' },
      ]),
    ).toBe(false);
    expect(validate([])).toBe(false);
  });

  it('lists every catalogued error code in Problem.code, and nothing else', () => {
    const problem = (doc.components?.schemas as Record<string, { properties: Record<string, { enum?: string[] }> }>)
      .Problem;
    expect(problem.properties.code.enum?.slice().sort()).toEqual(Object.keys(ErrorCatalog).sort());
    const ajv = createAjv();
    ajv.addSchema(JSON.parse(JSON.stringify(doc)) as object, 'doc');
    const validate = ajv.compile({ $ref: 'doc#/components/schemas/Problem' });
    const body = {
      type: '/problems/not-found',
      title: 'Not Found',
      status: 404,
      detail: 'no receivable with this id',
      code: 'not_found',
    };
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, code: 'no_such_code' })).toBe(false);
  });

  it('shows Idempotent-Replayed on the stored 4xx of an idempotent operation, not on refusals before it ran', () => {
    const cancel = doc.paths?.['/api/v1/accounts-receivable/{uuid}/cancel']?.post;
    const headersOf = (status: string) =>
      Object.keys((cancel?.responses?.[status] as { headers?: object } | undefined)?.headers ?? {});
    expect(headersOf('202')).toContain('Idempotent-Replayed');
    expect(headersOf('404')).toContain('Idempotent-Replayed');
    expect(headersOf('409')).toContain('Idempotent-Replayed');
    expect(headersOf('401')).not.toContain('Idempotent-Replayed');
    expect(headersOf('422')).not.toContain('Idempotent-Replayed');
    const download = API_OPERATIONS.find((o) => o.operationId === 'downloadBooklet')!;
    const downloadNotFound = doc.paths?.[download.path]?.get?.responses?.['404'] as { headers?: object } | undefined;
    expect(Object.keys(downloadNotFound!.headers!)).toEqual(['X-Request-Id']); // a GET takes no Idempotency-Key
  });

  it('is plain JSON (no TypeBox symbols, nothing lost in a round trip)', () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});
