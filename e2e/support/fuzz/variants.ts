import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { mutate, mutationChoice, serialize } from './mutations';
import type { Json, SchemaNode } from './schema-arbitrary';

/*
 * The request variants both fuzzes (the public API's: cases.ts, the admin API's: admin-cases.ts) build
 * from one operation's valid parts: the same request with one header, path or query parameter or the
 * body broken, random JSON and random bytes. What differs per API (its operations' shape, its world,
 * its credentials, its extra bad values) comes in as a VariantSpec.
 */

export type CaseKind = 'valid' | 'body' | 'path' | 'query' | 'header' | 'random_json' | 'random_bytes';

/**
 * One generated request. `Own` names the credential the runner sends for `auth` (the tenant's, the
 * operator's); none: no Authorization header; header: exactly `authorization`.
 */
export interface GeneratedCase<Own extends string> {
  operationId: string;
  /** valid | body | path | query | header | random_json | random_bytes: what was generated. */
  kind: CaseKind;
  /** What was broken, e.g. "nul at /0/name". */
  description: string;
  method: 'GET' | 'POST' | 'PUT';
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  auth: Own | 'none' | { authorization: string };
  /** Body as text, or as base64 bytes (random bytes, gzip). */
  body?: { text: string } | { base64: string };
}

/** A case of either API: the variants never read whose credential `auth` names. */
type AnyCase = GeneratedCase<string>;

/** A request before it is written out: parameters by name, query entries in order, body as JSON. */
export interface Parts {
  pathValues: Record<string, string>;
  query: Array<[string, string]>;
  body: Json | undefined;
  headers: Record<string, string>;
}

/** The method, URL, headers and body of `parts` sent to `operation` (path template with {name}s). */
function requestOf(
  operation: { path: string; method: string },
  parts: Parts,
): Pick<AnyCase, 'method' | 'url' | 'headers' | 'body'> {
  let path = operation.path;
  for (const [name, value] of Object.entries(parts.pathValues)) path = path.replace(`{${name}}`, value);
  const query = parts.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = { ...parts.headers };
  let body: AnyCase['body'];
  if (parts.body !== undefined) {
    body = { text: serialize(parts.body) };
    headers['content-type'] ??= 'application/json';
  }
  return {
    method: operation.method.toUpperCase() as AnyCase['method'],
    url: query ? `${path}?${query}` : path,
    headers,
    body,
  };
}

/** Each parameter present or not, with a value of its arbitrary: the query entries in order. */
export function optionalEntries(
  parameters: Array<{ name: string; value: fc.Arbitrary<string> }>,
): fc.Arbitrary<Array<[string, string]>> {
  const entries = parameters.map((p) =>
    fc.option(
      p.value.map((v) => [p.name, v] as [string, string]),
      { nil: undefined },
    ),
  );
  return fc.tuple(...entries).map((list) => list.filter((e): e is [string, string] => e !== undefined));
}

/** A known id most of the time, otherwise a UUID nothing has. */
export const knownOrRandom = (ids: string[]): fc.Arbitrary<string> =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ids) }, fc.uuid());

/* Bad values ---------------------------------------------------------------------------------------- */

/** Values an API adds to the generic bad ones: constants, and arbitraries of its own. */
export interface ExtraBadValues {
  values?: string[];
  arbitraries?: Array<fc.Arbitrary<string>>;
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
  'x'.repeat(300),
  'x'.repeat(9000),
  '%F0%9F%98%80',
  '00000000-0000-0000-0000-00000000000g',
  '{uuid}',
  '%2F..%2F',
  '__proto__',
];

/** Path segments no parameter takes: encodings, numbers, near-UUIDs, long and random text. */
function badPathValue(extra: ExtraBadValues = {}): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...BAD_PATH_VALUES, ...(extra.values ?? [])),
    fc.uuid().map((u) => `${u}%00`),
    fc.uuid().map((u) => u.replace(/-/g, '')),
    fc.uuid().map((u) => `{${u}}`),
    ...(extra.arbitraries ?? []),
    fc
      .string({ minLength: 1, maxLength: 60 })
      .map(encodeURIComponent)
      .filter((s) => s !== '.' && s !== '..'),
    fc
      .string({ unit: 'binary', minLength: 1, maxLength: 40 })
      .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
  );
}

const BAD_QUERY_VALUES = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '99999999999999999999',
  '%00',
  'x'.repeat(600),
  '[]',
  'null',
];

/** Query values no parameter takes (or an odd one some might): numbers, blanks, encodings, text. */
function badQueryValue(extra: ExtraBadValues = {}): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...BAD_QUERY_VALUES, ...(extra.values ?? [])),
    fc.string({ maxLength: 30 }),
    ...(extra.arbitraries ?? []),
  );
}

/* Headers ------------------------------------------------------------------------------------------- */

export interface HeaderBreak<C extends AnyCase> {
  name: string;
  apply: (c: C) => C;
}

/** The case with headers set (undefined: removed). */
export function withHeaders<C extends AnyCase>(c: C, change: Record<string, string | undefined>): C {
  const headers = { ...c.headers };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return { ...c, headers };
}

const withAuth = <C extends AnyCase>(c: C, auth: 'none' | { authorization: string }): C => ({ ...c, auth });

/** Broken headers every API must refuse alike: the content type and coding, the credential's form. */
function commonHeaderBreaks<C extends AnyCase>(): Array<HeaderBreak<C>> {
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
    { name: 'content-encoding br', apply: (c) => withHeaders(c, { 'content-encoding': 'br' }) },
    { name: 'content-encoding gzip, body plain', apply: (c) => withHeaders(c, { 'content-encoding': 'gzip' }) },
    { name: 'no authorization', apply: (c) => withAuth(c, 'none') },
    { name: 'authorization Basic', apply: (c) => withAuth(c, { authorization: 'Basic dXNlcjpwYXNz' }) },
    { name: 'authorization Bearer alone', apply: (c) => withAuth(c, { authorization: 'Bearer' }) },
  ];
}

/** A header break that sends `authorization` as it is. */
export function authorizationBreak<C extends AnyCase>(name: string, authorization: string): HeaderBreak<C> {
  return { name, apply: (c) => withAuth(c, { authorization }) };
}

/* Bodies -------------------------------------------------------------------------------------------- */

/** A whole body: its name and its text, made from the valid body. */
export type BodyBreak = [string, (body: Json) => string];

/** The body as a whole, broken alike for every API: empty, deep, the wrong shape, not JSON at all. */
const COMMON_BODY_BREAKS: BodyBreak[] = [
  ['empty array', () => '[]'],
  ['empty object', () => '{}'],
  ['1 MiB of [', () => '['.repeat(1024 * 1024 - 16)],
  ['33 levels of {', () => `${'{"a":'.repeat(33)}1${'}'.repeat(33)}`],
  ['a JSON string', () => '"hello"'],
  ['a number', () => '42'],
  ['null', () => 'null'],
  ['truncated', (body) => serialize(body).slice(0, -1)],
  ['trailing garbage', (body) => `${serialize(body)}}`],
  ['BOM', (body) => `\ufeff${serialize(body)}`],
  ['lone surrogate escape', (body) => serialize(body).replace(/"([^"\\]{1,3})"/, '"$1\\ud800"')],
  ['NUL escape', (body) => serialize(body).replace(/"([^"\\]{1,3})"/, '"$1\\u0000"')],
];

/* Variants ------------------------------------------------------------------------------------------ */

/** What one operation of one API contributes to its variants: what differs between the APIs. */
export interface VariantSpec<Own extends string> {
  operation: { operationId: string; path: string; method: string };
  /** The credential a case is sent with unless a header break changes it. */
  auth: Own | 'none';
  valid: fc.Arbitrary<Parts>;
  validWeight: number;
  /** The API's own header breaks, on top of commonHeaderBreaks. */
  headerBreaks: Array<HeaderBreak<GeneratedCase<Own>>>;
  /** The request body's schema and how often to break one field of it; none: the operation takes no body. */
  bodySchema?: { schema: SchemaNode; weight: number };
  /** The API's own whole-body breaks, on top of COMMON_BODY_BREAKS; none: no whole-body breaks at all. */
  bodyBreaks?: BodyBreak[];
  pathNames: string[];
  queryNames: string[];
  /** The API's own bad values, on top of the generic ones. */
  badPath?: ExtraBadValues;
  badQuery?: ExtraBadValues;
}

type Weighted<C> = { weight: number; arbitrary: fc.Arbitrary<C> };

/** What every variant starts from: the operation's valid parts, and how a case is written out. */
interface Builder<C extends AnyCase> {
  valid: fc.Arbitrary<Parts>;
  toCase: (parts: Parts, kind: CaseKind, description: string) => C;
}

/** Every variant of one operation, by weight; a GET loses any body (fetch sends none). */
export function operationVariants<Own extends string>(spec: VariantSpec<Own>): fc.Arbitrary<GeneratedCase<Own>> {
  const { valid, operation } = spec;
  const toCase = (parts: Parts, kind: CaseKind, description: string): GeneratedCase<Own> => ({
    operationId: operation.operationId,
    kind,
    description,
    ...requestOf(operation, parts),
    auth: spec.auth,
  });
  const b: Builder<GeneratedCase<Own>> = { valid, toCase };
  const variants: Array<Weighted<GeneratedCase<Own>>> = [
    { weight: spec.validWeight, arbitrary: valid.map((p) => toCase(p, 'valid', 'valid')) },
    { weight: 2, arbitrary: headerVariant(b, [...commonHeaderBreaks<GeneratedCase<Own>>(), ...spec.headerBreaks]) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.jsonValue({ maxDepth: 4 }))
        .map(([p, j]) => toCase({ ...p, body: j as Json }, 'random_json', 'random JSON body')),
    },
    { weight: 1, arbitrary: randomBytesVariant(b) },
  ];
  if (spec.bodySchema) variants.push({ weight: spec.bodySchema.weight, arbitrary: bodyMutation(b, spec.bodySchema) });
  if (spec.bodyBreaks)
    variants.push({ weight: 1, arbitrary: wholeBodyVariant(b, [...COMMON_BODY_BREAKS, ...spec.bodyBreaks]) });
  if (spec.pathNames.length > 0)
    variants.push({ weight: 3, arbitrary: pathVariant(b, spec.pathNames, badPathValue(spec.badPath)) });
  if (spec.queryNames.length > 0)
    variants.push({ weight: 3, arbitrary: queryVariant(b, spec.queryNames, badQueryValue(spec.badQuery)) });
  return fc.oneof(...variants).map(withoutGetBody);
}

function headerVariant<C extends AnyCase>(
  { valid, toCase }: Builder<C>,
  headerBreaks: Array<HeaderBreak<C>>,
): fc.Arbitrary<C> {
  return fc
    .tuple(valid, fc.nat({ max: headerBreaks.length - 1 }))
    .map(([p, i]) => headerBreaks[i].apply(toCase(p, 'header', headerBreaks[i].name)));
}

function randomBytesVariant<C extends AnyCase>({ valid, toCase }: Builder<C>): fc.Arbitrary<C> {
  return fc.tuple(valid, fc.uint8Array({ maxLength: 512 }), fc.boolean()).map(([p, bytes, gzip]) => {
    const c = toCase({ ...p, body: undefined }, 'random_bytes', gzip ? 'random bytes, gzip' : 'random bytes');
    const payload = gzip ? gzipSync(bytes) : Buffer.from(bytes);
    const coding = gzip ? { 'content-encoding': 'gzip' } : {};
    return {
      ...withHeaders(c, { 'content-type': 'application/json', ...coding }),
      body: { base64: payload.toString('base64') },
    };
  });
}

function bodyMutation<C extends AnyCase>(
  { valid, toCase }: Builder<C>,
  { schema }: { schema: SchemaNode },
): fc.Arbitrary<C> {
  return fc.tuple(valid, mutationChoice).map(([p, choice]) => {
    const mutated = mutate(p.body ?? null, schema, choice);
    return toCase({ ...p, body: mutated.value }, 'body', mutated.description);
  });
}

function wholeBodyVariant<C extends AnyCase>({ valid, toCase }: Builder<C>, breaks: BodyBreak[]): fc.Arbitrary<C> {
  return fc.tuple(valid, fc.constantFrom(...breaks)).map(([p, [name, text]]) => ({
    ...withHeaders(toCase({ ...p, body: undefined }, 'body', name), { 'content-type': 'application/json' }),
    body: { text: text(p.body ?? {}) },
  }));
}

function pathVariant<C extends AnyCase>(
  { valid, toCase }: Builder<C>,
  pathNames: string[],
  badPath: fc.Arbitrary<string>,
): fc.Arbitrary<C> {
  return fc
    .tuple(valid, fc.constantFrom(...pathNames), badPath)
    .map(([p, name, bad]) =>
      toCase({ ...p, pathValues: { ...p.pathValues, [name]: bad } }, 'path', `path ${name}=${bad.slice(0, 40)}`),
    );
}

function queryVariant<C extends AnyCase>(
  { valid, toCase }: Builder<C>,
  queryNames: string[],
  badQuery: fc.Arbitrary<string>,
): fc.Arbitrary<C> {
  return fc.tuple(valid, fc.constantFrom(...queryNames), badQuery, fc.boolean()).map(([p, name, bad, twice]) => {
    const query = p.query.filter(([k]) => k !== name);
    query.push([name, bad]);
    if (twice) query.push([name, bad]);
    return toCase({ ...p, query }, 'query', `query ${name}=${bad.slice(0, 40)}${twice ? ' (twice)' : ''}`);
  });
}

/** fetch sends no body with a GET: such a case loses its body and the headers that describe one. */
function withoutGetBody<C extends AnyCase>(c: C): C {
  if (c.method !== 'GET' || c.body === undefined) return c;
  return { ...withHeaders(c, { 'content-type': undefined, 'content-encoding': undefined }), body: undefined };
}
