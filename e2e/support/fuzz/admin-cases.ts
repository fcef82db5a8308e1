import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { ADMIN_OPERATIONS, type AdminOperation, type ParameterObject } from '@payments/contracts';
import type { FuzzCase } from './cases';
import { mutate, mutationChoice, serialize } from './mutations';
import { asNode, validArbitrary, type Hints, type Json, type SchemaNode } from './schema-arbitrary';

/**
 * One generated request against one operation of the admin API (libs/contracts ADMIN_OPERATIONS: the
 * list its OpenAPI document is built from, so a new admin route is fuzzed once it is documented). The
 * shape of the public fuzz's case, except `auth`: operator sends the run's operator credential.
 */
export interface AdminCase extends Omit<FuzzCase, 'auth'> {
  auth: 'operator' | 'none' | { authorization: string };
}

/** What exists before fuzzing, so that valid requests find real tenants and tokens. */
export interface AdminWorld {
  tenantIds: string[];
  tokenIds: string[];
  /** Credentials that are not an active operator's: each must be refused. */
  foreignCredentials: { tenantToken: string; tenantJwt: string; revokedOperator: string };
}

const VALID_TAX_IDS = ['529.982.247-25', '52998224725', '11.222.333/0001-81', '11222333000181', '12.ABC.345/01DE-35'];

const HINTS: Hints = {
  provider: fc.constantFrom<Json>('sandbox', 'sandbox', 'sandbox', 'inter'),
  tax_id: fc.constantFrom(...VALID_TAX_IDS),
  base_url: fc.constant('https://cdpj.partners.bancointer.com.br'),
};

/** A sandbox account takes no base URL nor credentials: without them most generated accounts are valid. */
function repair(operationId: string, body: Json): Json {
  if (operationId !== 'adminSetProviderAccount' || body === null || typeof body !== 'object' || Array.isArray(body))
    return body;
  if (body.provider === 'sandbox') {
    delete body.base_url;
    delete body.credentials;
  }
  return body;
}

/* Path parameters ---------------------------------------------------------------------------------- */

function validPathValue(name: string, world: AdminWorld): fc.Arbitrary<string> {
  const known = (ids: string[]) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ids) }, fc.uuid());
  switch (name) {
    case 'tenant_id':
      return known(world.tenantIds);
    case 'token_id':
      return known(world.tokenIds);
    default:
      // dead_letter_id: none exists in a fresh world, so every redrive is a 404 (or a refusal).
      return fc.integer({ min: 1, max: 1_000_000 }).map(String);
  }
}

// No '.', '..' or blanks: the URL parser folds those into another route before anything is sent.
const BAD_PATH_VALUES = [
  '%00',
  'abc%00',
  '%zz',
  '%',
  '%C0%AE',
  '%ED%A0%80',
  '%20',
  'null',
  '0',
  '-1',
  '1e3',
  '1.5',
  '0x10',
  '99999999999999999999',
  '9007199254740993',
  'x'.repeat(300),
  'x'.repeat(9000),
  '%F0%9F%98%80',
  '00000000-0000-0000-0000-00000000000g',
  '{uuid}',
  '%2F..%2F',
  '__proto__',
];

const badPathValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...BAD_PATH_VALUES),
  fc.uuid().map((u) => `${u}%00`),
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => `${u.slice(0, -1)}`),
  fc
    .string({ minLength: 1, maxLength: 60 })
    .map(encodeURIComponent)
    .filter((s) => s !== '.' && s !== '..'),
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: 40 })
    .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
);

/* Query parameters --------------------------------------------------------------------------------- */

const BAD_QUERY_VALUES = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '1001',
  '99999999999999999999',
  '9999999999999999999',
  '999999999999999999',
  'HOUR',
  'week',
  'hour ',
  '%00',
  '\u0000',
  'x'.repeat(600),
  '[]',
  'null',
  '00000000-0000-0000-0000-00000000000g',
];

function validQueryValue(parameter: ParameterObject, world: AdminWorld): fc.Arbitrary<string> {
  const schema = parameter.schema as SchemaNode & { enum?: string[] };
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (parameter.name === 'tenant_id') return validPathValue('tenant_id', world);
  return (validArbitrary(schema) as fc.Arbitrary<Json>).map(String);
}

function validQuery(operation: AdminOperation, world: AdminWorld): fc.Arbitrary<Array<[string, string]>> {
  const entries = (operation.queryParameters ?? []).map((p) =>
    fc.option(
      validQueryValue(p, world).map((v) => [p.name, v] as [string, string]),
      { nil: undefined },
    ),
  );
  return fc.tuple(...entries).map((list) => list.filter((e): e is [string, string] => e !== undefined));
}

/* Requests ----------------------------------------------------------------------------------------- */

interface Parts {
  pathValues: Record<string, string>;
  query: Array<[string, string]>;
  body: Json | undefined;
}

function validParts(operation: AdminOperation, world: AdminWorld): fc.Arbitrary<Parts> {
  const names = operation.pathParameters ?? [];
  const body = operation.requestBody
    ? validArbitrary(asNode(operation.requestBody), HINTS).map((b) => repair(operation.operationId, b))
    : fc.constant(undefined);
  return fc
    .record({
      pathValues: fc.tuple(...names.map((n) => validPathValue(n, world))),
      query: validQuery(operation, world),
      body,
    })
    .map(({ pathValues, query, body: b }) => ({
      pathValues: Object.fromEntries(names.map((n, i) => [n, pathValues[i]])),
      query,
      body: b,
    }));
}

function toCase(operation: AdminOperation, parts: Parts, kind: FuzzCase['kind'], description: string): AdminCase {
  let path = operation.path;
  for (const [name, value] of Object.entries(parts.pathValues)) path = path.replace(`{${name}}`, value);
  const query = parts.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = {};
  let body: AdminCase['body'];
  if (parts.body !== undefined) {
    body = { text: serialize(parts.body) };
    headers['content-type'] = 'application/json';
  }
  return {
    operationId: operation.operationId,
    kind,
    description,
    method: operation.method.toUpperCase() as AdminCase['method'],
    url: query ? `${path}?${query}` : path,
    headers,
    auth: 'operator',
    body,
  };
}

/** Broken headers: the content type and coding, the credential (a tenant's is no operator's). */
function headerBreaks(world: AdminWorld): Array<{ name: string; apply: (c: AdminCase) => AdminCase }> {
  const bearer =
    (token: string) =>
    (c: AdminCase): AdminCase => ({ ...c, auth: { authorization: `Bearer ${token}` } });
  const { tenantToken, tenantJwt, revokedOperator } = world.foreignCredentials;
  return [
    { name: 'content-type text/plain', apply: (c) => withHeaders(c, { 'content-type': 'text/plain' }) },
    {
      name: 'content-type form',
      apply: (c) => withHeaders(c, { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    { name: 'charset utf-16', apply: (c) => withHeaders(c, { 'content-type': 'application/json; charset=utf-16' }) },
    {
      name: 'content-type multipart',
      apply: (c) => withHeaders(c, { 'content-type': 'multipart/form-data; boundary=x' }),
    },
    { name: 'no content-type', apply: (c) => withHeaders(c, { 'content-type': undefined }) },
    { name: 'content-encoding br', apply: (c) => withHeaders(c, { 'content-encoding': 'br' }) },
    { name: 'content-encoding gzip, body plain', apply: (c) => withHeaders(c, { 'content-encoding': 'gzip' }) },
    { name: 'no authorization', apply: (c) => ({ ...c, auth: 'none' }) },
    { name: 'authorization Basic', apply: (c) => ({ ...c, auth: { authorization: 'Basic dXNlcjpwYXNz' } }) },
    { name: 'authorization Bearer alone', apply: (c) => ({ ...c, auth: { authorization: 'Bearer' } }) },
    { name: 'authorization opk_ alone', apply: bearer('opk_') },
    { name: 'authorization unknown opk_', apply: bearer(`opk_${'A'.repeat(43)}`) },
    { name: 'authorization huge opk_', apply: bearer(`opk_${'a'.repeat(6000)}`) },
    { name: "a tenant's integration token", apply: bearer(tenantToken) },
    { name: "a tenant's JWT", apply: bearer(tenantJwt) },
    { name: 'a revoked operator credential', apply: bearer(revokedOperator) },
  ];
}

function withHeaders(c: AdminCase, change: Record<string, string | undefined>): AdminCase {
  const headers = { ...c.headers };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return { ...c, headers };
}

/** The body as a whole: empty, too large, the wrong shape, nested too deep, not JSON at all. */
function wholeBodyBreak(operation: AdminOperation, p: Parts): fc.Arbitrary<AdminCase> {
  const body = p.body ?? {};
  const breaks: Array<[string, () => string]> = [
    ['empty object', () => '{}'],
    ['empty array', () => '[]'],
    ['over 1 MiB', () => serialize({ ...(body as object), name: 'x'.repeat(1024 * 1024) })],
    ['1 MiB of [', () => '['.repeat(1024 * 1024 - 16)],
    ['32 levels of {', () => `${'{"a":'.repeat(32)}1${'}'.repeat(32)}`],
    ['33 levels of {', () => `${'{"a":'.repeat(33)}1${'}'.repeat(33)}`],
    ['33 levels of [', () => `${'['.repeat(33)}1${']'.repeat(33)}`],
    ['a JSON string', () => '"hello"'],
    ['a number', () => '42'],
    ['null', () => 'null'],
    ['truncated', () => serialize(body).slice(0, -1)],
    ['trailing garbage', () => `${serialize(body)}}`],
    ['BOM', () => `\ufeff${serialize(body)}`],
    ['lone surrogate escape', () => serialize(body).replace(/"([^"\\]{1,3})"/, '"$1\\ud800"')],
    ['NUL escape', () => serialize(body).replace(/"([^"\\]{1,3})"/, '"$1\\u0000"')],
    ['NUL in every string', () => serialize(body).replace(/"([^"\\]+)"(?!:)/g, '"$1\\u0000"')],
  ];
  return fc.constantFrom(...breaks).map(([name, text]) => ({
    ...toCase(operation, { ...p, body: undefined }, 'body', name),
    headers: { 'content-type': 'application/json' },
    body: { text: text() },
  }));
}

function operationArbitrary(operation: AdminOperation, world: AdminWorld): fc.Arbitrary<AdminCase> {
  const valid = validParts(operation, world);
  const breaks = headerBreaks(world);
  const variants: Array<{ weight: number; arbitrary: fc.Arbitrary<AdminCase> }> = [
    { weight: 4, arbitrary: valid.map((p) => toCase(operation, p, 'valid', 'valid')) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat({ max: breaks.length - 1 }))
        .map(([p, i]) => breaks[i].apply(toCase(operation, p, 'header', breaks[i].name))),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.jsonValue({ maxDepth: 4 }))
        .map(([p, j]) => toCase(operation, { ...p, body: j as Json }, 'random_json', 'random JSON body')),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.uint8Array({ maxLength: 512 }), fc.boolean()).map(([p, bytes, gzip]) => {
        const c = toCase(
          operation,
          { ...p, body: undefined },
          'random_bytes',
          gzip ? 'random bytes, gzip' : 'random bytes',
        );
        const payload = gzip ? gzipSync(bytes) : Buffer.from(bytes);
        return {
          ...c,
          headers: { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
          body: { base64: payload.toString('base64') },
        };
      }),
    },
    { weight: 1, arbitrary: valid.chain((p) => wholeBodyBreak(operation, p)) },
  ];
  if (operation.requestBody) {
    const schema = asNode(operation.requestBody);
    variants.push({
      weight: 6,
      arbitrary: fc.tuple(valid, mutationChoice).map(([p, choice]) => {
        const mutated = mutate(p.body ?? {}, schema, choice);
        return toCase(operation, { ...p, body: mutated.value }, 'body', mutated.description);
      }),
    });
  }
  if (operation.pathParameters?.length) {
    const names = operation.pathParameters;
    variants.push({
      weight: 3,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...names), badPathValue)
        .map(([p, name, bad]) =>
          toCase(
            operation,
            { ...p, pathValues: { ...p.pathValues, [name]: bad } },
            'path',
            `path ${name}=${bad.slice(0, 40)}`,
          ),
        ),
    });
  }
  if (operation.queryParameters?.length) {
    const names = operation.queryParameters.map((q) => q.name);
    variants.push({
      weight: 3,
      arbitrary: fc
        .tuple(
          valid,
          fc.constantFrom(...names),
          fc.oneof(fc.constantFrom(...BAD_QUERY_VALUES), fc.string({ maxLength: 30 })),
          fc.boolean(),
        )
        .map(([p, name, bad, twice]) => {
          const query = p.query.filter(([k]) => k !== name);
          query.push([name, bad]);
          if (twice) query.push([name, bad]);
          return toCase(
            operation,
            { ...p, query },
            'query',
            `query ${name}=${bad.slice(0, 40)}${twice ? ' (twice)' : ''}`,
          );
        }),
    });
  }
  return fc.oneof(...variants).map(withoutGetBody);
}

/** fetch sends no body with a GET: such a case loses its body and the headers that describe one. */
function withoutGetBody(c: AdminCase): AdminCase {
  if (c.method !== 'GET' || c.body === undefined) return c;
  return { ...withHeaders(c, { 'content-type': undefined, 'content-encoding': undefined }), body: undefined };
}

/** Every operation of the admin API, equally often; the same shapes for the same seed. */
export function adminFuzzCases(world: AdminWorld): fc.Arbitrary<AdminCase> {
  return fc.oneof(...ADMIN_OPERATIONS.map((operation) => operationArbitrary(operation, world)));
}

export const ADMIN_FUZZED_OPERATIONS = ADMIN_OPERATIONS.map((o) => o.operationId);

/** Operations whose success changes something (each writes exactly one audit entry). */
export const ADMIN_MUTATING = new Set(ADMIN_OPERATIONS.filter((o) => o.method !== 'get').map((o) => o.operationId));

/** The case as the public fuzz's runner sends it: its `tenant` credential is the operator's here. */
export function asFuzzCase(c: AdminCase): FuzzCase {
  return { ...c, auth: c.auth === 'operator' ? 'tenant' : c.auth };
}
