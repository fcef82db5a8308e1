import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { API_OPERATIONS, type ApiOperation, type ApiParameter } from '@payments/contracts';
import { signLink, DEV_DOWNLOAD_LINK_SECRET } from '@payments/signed-links';
import { mutate, mutationChoice, serialize } from './mutations';
import { asNode, dateArbitrary, validArbitrary, type Hints, type Json } from './schema-arbitrary';

/**
 * One generated request against one operation of the public API (libs/contracts API_OPERATIONS: the
 * list the OpenAPI document is built from, so a new endpoint is fuzzed as soon as it is documented).
 * `auth` says which credential to send: the runner decides whose (the tenant that makes only
 * rejected requests, or the one that makes the rest) from the request's predicted fate.
 */
export interface FuzzCase {
  operationId: string;
  /** valid | body | path | query | header | random_json | random_bytes: what was generated. */
  kind: CaseKind;
  /** What was broken, e.g. "nul at /0/name". */
  description: string;
  method: 'GET' | 'POST' | 'PUT';
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  /**
   * tenant: the tenant's credential for the operation (integration token for authenticate, access
   * token otherwise); none: no Authorization header; header: exactly `authorization`.
   */
  auth: 'tenant' | 'none' | { authorization: string };
  /** Body as text, or as base64 bytes (random bytes, gzip). */
  body?: { text: string } | { base64: string };
}

export type CaseKind = 'valid' | 'body' | 'path' | 'query' | 'header' | 'random_json' | 'random_bytes';

/** What the system holds before fuzzing, so valid requests find real records. */
export interface FuzzWorld {
  receiverUrl: string;
  clientIds: string[];
  receivableIds: string[];
  paymentSlipIds: string[];
  eventIds: string[];
  /** A booklet that exists (its download link is signed with the development secret). */
  bookletLink: { id: string };
}

const VALID_TAX_IDS = ['529.982.247-25', '52998224725', '11.222.333/0001-81', '11222333000181', '12.ABC.345/01DE-35'];
const cents = (min: number, max: number) => fc.integer({ min, max }).map((c) => c / 100);

/** The fields a schema cannot make valid on its own, by property name. */
function hintsFor(operationId: string, world: FuzzWorld): Hints {
  const hints: Hints = {
    cnpj_cpf: fc.constantFrom(...VALID_TAX_IDS),
    url_callback: fc.constant(world.receiverUrl),
    value: cents(1, 5_000_000),
    price: cents(0, 1_000_000),
    quantity: fc.integer({ min: 1, max: 50 }),
    discount_value: cents(1, 100),
    interest_amount: cents(0, 500),
    fine_value: cents(0, 1000),
    cursor: craftedCursor,
  };
  if (operationId === 'createReceivables') {
    hints.client_id = fc.constantFrom(...world.clientIds);
    hints.payment_slip_id = fc.oneof(fc.constantFrom(...world.paymentSlipIds), fc.uuid());
  }
  return hints;
}

/**
 * Cursors an attacker could craft: base64url of the JSON pair the services hand out, with odd
 * members (a date Postgres cannot read, an id that is no UUID, U+0000).
 */
const craftedCursor: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom<Json>(
      '2026-01-01',
      '0000-01-01',
      '2026-13-45',
      '9999-99-99',
      '2026-01-01T00:00:00.000Z',
      '+275760-09-13T00:00:00.000Z',
      'x',
      1,
      null,
    ),
    fc.constantFrom<Json>(
      '-'.repeat(36),
      'a'.repeat(36),
      '00000000-0000-0000-0000-000000000000',
      'abc\u0000',
      'x'.repeat(200),
      5,
      null,
    ),
  )
  .map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url'));

/** Cross-field rules a schema walk cannot know, so most generated bodies are accepted. */
function repair(operationId: string, body: Json): Json {
  if (operationId === 'createReceivables' && Array.isArray(body)) {
    for (const item of body as Array<Record<string, Json>>) {
      const [emission, due] = [item.emission_date as string, item.due_date as string].sort();
      item.emission_date = emission;
      item.due_date = due;
      if (item.discount_type === 'ValorFixoAteDataInformada') {
        item.discount_date = emission;
        item.discount_value = Math.max(0.01, Math.floor(((item.value as number) * 100) / 2) / 100);
        if ((item.value as number) <= 0.01) item.value = 1;
      }
    }
  }
  if (operationId === 'searchReceivables' && body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, Json>;
    [b.start_date, b.end_date] = [b.start_date as string, b.end_date as string].sort();
  }
  return body;
}

/* Path parameters ---------------------------------------------------------------------------------- */

function validPathValue(operation: ApiOperation, parameter: ApiParameter, world: FuzzWorld): fc.Arbitrary<string> {
  const known = (ids: string[]) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ids) }, fc.uuid());
  switch (`${operation.operationId}.${parameter.name}`) {
    case 'updateClient.uuid':
      return known(world.clientIds);
    case 'cancelReceivable.uuid':
    case 'consultReceivable.uuid':
      return known(world.receivableIds);
    case 'requestBooklet.uuid':
      return known(world.paymentSlipIds);
    case 'getCallback.event_id':
    case 'retryCallback.event_id':
      return known(world.eventIds);
    case 'downloadBooklet.booklet_id':
      return fc.oneof({ weight: 4, arbitrary: fc.constant(world.bookletLink.id) }, fc.uuid());
    case 'downloadSlipPdf.receivable_id':
    case 'downloadSlipQrCode.receivable_id':
      return known(world.receivableIds);
    default:
      return validArbitrary(asNode(parameter.schema)) as fc.Arbitrary<string>;
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
  'undefined',
  '0',
  '-1',
  '1e3',
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
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => `${u}%00`),
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.uuid().map((u) => `{${u}}`),
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
  '99999999999999999999',
  'ALL',
  'pending ',
  '%00',
  'x'.repeat(600),
  '[]',
  'null',
];

function validQuery(operation: ApiOperation): fc.Arbitrary<Array<[string, string]>> {
  const parameters = operation.queryParameters ?? [];
  if (parameters.some((p) => p.name === 'signature')) return fc.constant([]);
  const entries = parameters.map((p) =>
    fc.option(
      (validArbitrary(asNode(p.schema)) as fc.Arbitrary<Json>).map((v) => [p.name, String(v)] as [string, string]),
      { nil: undefined },
    ),
  );
  return fc.tuple(...entries).map((list) => list.filter((e): e is [string, string] => e !== undefined));
}

/**
 * A signed download link's query for the path's resource, signed with the development secret the
 * test system runs with (as booklet-svc and receivables-svc sign theirs): a real file or an unknown id.
 */
function signedQuery(operation: ApiOperation, pathValues: Record<string, string>): Array<[string, string]> {
  const id = pathValues[operation.pathParameters?.[0]?.name ?? ''] ?? '';
  const { expires, signature } = devSignedLink(id);
  return [
    ['expires', expires],
    ['signature', signature],
  ];
}

/* Requests ----------------------------------------------------------------------------------------- */

interface Parts {
  pathValues: Record<string, string>;
  query: Array<[string, string]>;
  body: Json | undefined;
  headers: Record<string, string>;
}

function validParts(operation: ApiOperation, world: FuzzWorld): fc.Arbitrary<Parts> {
  const hints = hintsFor(operation.operationId, world);
  const pathParams = operation.pathParameters ?? [];
  const body = operation.requestBody
    ? validArbitrary(asNode(operation.requestBody.schema), hints).map((b) => repair(operation.operationId, b))
    : fc.constant(undefined);
  return fc
    .record({
      pathValues: fc.tuple(...pathParams.map((p) => validPathValue(operation, p, world))),
      query: validQuery(operation),
      body,
      key: fc.uuid(),
    })
    .map(({ pathValues, query, body: b, key }): Parts => {
      const named = Object.fromEntries(pathParams.map((p, i) => [p.name, pathValues[i]]));
      const signed = operation.queryParameters?.some((p) => p.name === 'signature');
      return {
        pathValues: named,
        query: signed ? signedQuery(operation, named) : query,
        body: b,
        headers: operation.idempotency === 'none' ? {} : ({ 'idempotency-key': key } as Record<string, string>),
      };
    });
}

function toCase(operation: ApiOperation, parts: Parts, kind: CaseKind, description: string): FuzzCase {
  let path = operation.path;
  for (const [name, value] of Object.entries(parts.pathValues)) path = path.replace(`{${name}}`, value);
  const query = parts.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = { ...parts.headers };
  let body: FuzzCase['body'];
  if (parts.body !== undefined) {
    body = { text: serialize(parts.body) };
    headers['content-type'] ??= 'application/json';
  }
  return {
    operationId: operation.operationId,
    kind,
    description,
    method: operation.method.toUpperCase() as FuzzCase['method'],
    url: query ? `${path}?${query}` : path,
    headers,
    auth: operation.security === 'none' ? 'none' : 'tenant',
    body,
  };
}

/** Broken headers: the Idempotency-Key, the content type and coding, the credential. */
const HEADER_BREAKS: Array<{ name: string; apply: (c: FuzzCase) => FuzzCase }> = [
  { name: 'no idempotency-key', apply: (c) => withHeaders(c, { 'idempotency-key': undefined }) },
  { name: 'empty idempotency-key', apply: (c) => withHeaders(c, { 'idempotency-key': '' }) },
  { name: 'idempotency-key with a space', apply: (c) => withHeaders(c, { 'idempotency-key': 'a b' }) },
  { name: 'idempotency-key of 256 characters', apply: (c) => withHeaders(c, { 'idempotency-key': 'k'.repeat(256) }) },
  { name: 'idempotency-key in latin-1', apply: (c) => withHeaders(c, { 'idempotency-key': 'chav\u00e9' }) },
  { name: 'content-type text/plain', apply: (c) => withHeaders(c, { 'content-type': 'text/plain' }) },
  { name: 'content-type form', apply: (c) => withHeaders(c, { 'content-type': 'application/x-www-form-urlencoded' }) },
  { name: 'charset utf-16', apply: (c) => withHeaders(c, { 'content-type': 'application/json; charset=utf-16' }) },
  {
    name: 'content-type multipart',
    apply: (c) => withHeaders(c, { 'content-type': 'multipart/form-data; boundary=x' }),
  },
  { name: 'content-encoding br', apply: (c) => withHeaders(c, { 'content-encoding': 'br' }) },
  { name: 'content-encoding gzip, body plain', apply: (c) => withHeaders(c, { 'content-encoding': 'gzip' }) },
  { name: 'no authorization', apply: (c) => ({ ...c, auth: 'none' }) },
  { name: 'authorization Basic', apply: (c) => ({ ...c, auth: { authorization: 'Basic dXNlcjpwYXNz' } }) },
  { name: 'authorization Bearer alone', apply: (c) => ({ ...c, auth: { authorization: 'Bearer' } }) },
  { name: 'authorization random', apply: (c) => ({ ...c, auth: { authorization: 'Bearer abc.def.ghi' } }) },
  { name: 'authorization huge', apply: (c) => ({ ...c, auth: { authorization: `Bearer ${'a'.repeat(6000)}` } }) },
  {
    name: 'authorization alg none',
    apply: (c) => ({
      ...c,
      auth: {
        authorization: `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","tenant_id":"x"}').toString('base64url')}.`,
      },
    }),
  },
];

function withHeaders(c: FuzzCase, change: Record<string, string | undefined>): FuzzCase {
  const headers = { ...c.headers };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return { ...c, headers };
}

function operationArbitrary(operation: ApiOperation, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const valid = validParts(operation, world);
  const variants: Array<{ weight: number; arbitrary: fc.Arbitrary<FuzzCase> }> = [
    { weight: validWeight(operation), arbitrary: valid.map((p) => toCase(operation, p, 'valid', 'valid')) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat({ max: HEADER_BREAKS.length - 1 }))
        .map(([p, i]) => HEADER_BREAKS[i].apply({ ...toCase(operation, p, 'header', HEADER_BREAKS[i].name) })),
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
          headers: {
            ...c.headers,
            'content-type': 'application/json',
            ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          },
          body: { base64: payload.toString('base64') },
        };
      }),
    },
  ];
  if (operation.requestBody) {
    const schema = asNode(operation.requestBody.schema);
    variants.push({
      weight: 8,
      arbitrary: fc.tuple(valid, mutationChoice).map(([p, choice]) => {
        const mutated = mutate(p.body ?? null, schema, choice);
        return toCase(operation, { ...p, body: mutated.value }, 'body', mutated.description);
      }),
    });
    variants.push({ weight: 1, arbitrary: valid.chain((p) => wholeBodyBreak(operation, p)) });
  }
  if (operation.pathParameters?.length) {
    const names = operation.pathParameters.map((p) => p.name);
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
    const names = operation.queryParameters.map((p) => p.name);
    variants.push({
      weight: 3,
      arbitrary: fc
        .tuple(
          valid,
          fc.constantFrom(...names),
          fc.oneof(fc.constantFrom(...BAD_QUERY_VALUES), fc.string({ maxLength: 30 }), craftedCursor),
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
function withoutGetBody(c: FuzzCase): FuzzCase {
  if (c.method !== 'GET' || c.body === undefined) return c;
  const headers = { ...c.headers };
  delete headers['content-type'];
  delete headers['content-encoding'];
  return { ...c, body: undefined, headers };
}

/**
 * Valid booklets each render a PDF and valid charges each go to the bank sandbox and back: enough of
 * them to exercise the whole path, few enough for a 2-core machine.
 */
function validWeight(operation: ApiOperation): number {
  if (operation.operationId === 'requestBooklet') return 1;
  if (operation.operationId === 'createReceivables') return 2;
  return 3;
}

/** The body as a whole: empty, too many items, too large, the wrong shape, nested far too deep. */
function wholeBodyBreak(operation: ApiOperation, p: Parts): fc.Arbitrary<FuzzCase> {
  const item = Array.isArray(p.body) ? (p.body[0] ?? {}) : p.body;
  const breaks: Array<[string, () => string]> = [
    ['empty array', () => '[]'],
    ['empty object', () => '{}'],
    ['1,001 items', () => serialize(Array.from({ length: 1001 }, () => item ?? {}))],
    ['over 1 MiB', () => serialize([{ ...(item as object), name: 'x'.repeat(1024 * 1024) }])],
    ['1 MiB of [', () => '['.repeat(1024 * 1024 - 16)],
    ['33 levels of {', () => `${'{"a":'.repeat(33)}1${'}'.repeat(33)}`],
    ['a JSON string', () => '"hello"'],
    ['a number', () => '42'],
    ['null', () => 'null'],
    ['truncated', () => serialize(p.body ?? {}).slice(0, -1)],
    ['trailing garbage', () => `${serialize(p.body ?? {})}}`],
    ['duplicate keys', () => serialize(p.body ?? {}).replace(/^\[\{/, '[{"name":1,')],
    ['BOM', () => `\ufeff${serialize(p.body ?? {})}`],
    ['lone surrogate escape', () => serialize(p.body ?? {}).replace(/"([^"\\]{1,3})"/, '"$1\\ud800"')],
    ['NUL escape', () => serialize(p.body ?? {}).replace(/"([^"\\]{1,3})"/, '"$1\\u0000"')],
  ];
  return fc.constantFrom(...breaks).map(([name, text]) => ({
    ...toCase(operation, { ...p, body: undefined }, 'body', name),
    headers: { ...p.headers, 'content-type': 'application/json' },
    body: { text: text() },
  }));
}

/**
 * Every operation of the public API, equally often: a case stream that is the same for the same seed
 * (ids of the world differ per run; the shapes do not).
 */
export function fuzzCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc.oneof(...API_OPERATIONS.map((operation) => operationArbitrary(operation, world)));
}

/** The operations fuzzed (all of the public API). */
export const FUZZED_OPERATIONS = API_OPERATIONS.map((o) => o.operationId);

/** A link for `id` signed with the development secret, valid for a day (the gateway's test setting). */
export function devSignedLink(id: string): { expires: string; signature: string } {
  return signLink(DEV_DOWNLOAD_LINK_SECRET, id, new Date(Date.now() + 86_400_000));
}

export { dateArbitrary };
