import fc from 'fast-check';
import { API_OPERATIONS, type ApiOperation, type ApiParameter } from '@payments/contracts';
import { signLink, DEV_DOWNLOAD_LINK_SECRET } from '@payments/signed-links';
import { serialize } from './mutations';
import { asNode, dateArbitrary, validArbitrary, type Hints, type Json } from './schema-arbitrary';
import { authorizationBreak, knownOrRandom, operationVariants, optionalEntries, withHeaders } from './variants';
import type { BodyBreak, ExtraBadValues, GeneratedCase, HeaderBreak, Parts } from './variants';

/**
 * One generated request against one operation of the public API (libs/contracts API_OPERATIONS: the
 * list the OpenAPI document is built from, so a new endpoint is fuzzed as soon as it is documented).
 * `auth` says which credential to send: tenant is the tenant's for the operation (integration token
 * for authenticate, access token otherwise); the runner decides whose (the tenant that makes only
 * rejected requests, or the one that makes the rest) from the request's predicted fate.
 */
export type FuzzCase = GeneratedCase<'tenant'>;

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
    // Half the cursors are a search's own shape, so most valid searches run their filters in receivables-svc.
    cursor: fc.oneof(craftedCursor, searchCursor),
    // The search's filters (docs/api.md, "Search"): mostly ones that find something, in any case or accent.
    payer_name: fc.constantFrom('Maria', 'maria da silva', 'SILVA', 'conceição', 'Joã', '100%_x', '   abc  '),
    payer_tax_id: fc.constantFrom(...VALID_TAX_IDS),
    our_number: fc.stringMatching(/^[0-9A-Za-z./-]{1,20}$/),
  };
  if (operationId === 'createReceivables') {
    hints.client_id = fc.constantFrom(...world.clientIds);
    hints.payment_slip_id = fc.oneof(fc.constantFrom(...world.paymentSlipIds), fc.uuid());
  }
  return hints;
}

/** A cursor of the shape the search hands out: base64url of [emission date, charge id]. */
const searchCursor: fc.Arbitrary<string> = fc
  .tuple(dateArbitrary, fc.uuid())
  .map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url'));

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
  switch (`${operation.operationId}.${parameter.name}`) {
    case 'updateClient.uuid':
      return knownOrRandom(world.clientIds);
    case 'cancelReceivable.uuid':
    case 'consultReceivable.uuid':
      return knownOrRandom(world.receivableIds);
    case 'requestBooklet.uuid':
      return knownOrRandom(world.paymentSlipIds);
    case 'getCallback.event_id':
    case 'retryCallback.event_id':
      return knownOrRandom(world.eventIds);
    case 'downloadBooklet.booklet_id':
      return fc.oneof({ weight: 4, arbitrary: fc.constant(world.bookletLink.id) }, fc.uuid());
    case 'downloadSlipPdf.receivable_id':
    case 'downloadSlipQrCode.receivable_id':
      return knownOrRandom(world.receivableIds);
    default:
      return validArbitrary(asNode(parameter.schema)) as fc.Arbitrary<string>;
  }
}

/** The public API's own bad path values: 'undefined', and UUIDs spelt in upper case. */
const BAD_PATH: ExtraBadValues = { values: ['undefined'], arbitraries: [fc.uuid().map((u) => u.toUpperCase())] };

/* Query parameters --------------------------------------------------------------------------------- */

/** Enum values almost right, and cursors an attacker could craft. */
const BAD_QUERY: ExtraBadValues = { values: ['ALL', 'pending '], arbitraries: [craftedCursor] };

function validQuery(operation: ApiOperation): fc.Arbitrary<Array<[string, string]>> {
  const parameters = operation.queryParameters ?? [];
  if (parameters.some((p) => p.name === 'signature')) return fc.constant([]);
  return optionalEntries(
    parameters.map((p) => ({
      name: p.name,
      value: (validArbitrary(asNode(p.schema)) as fc.Arbitrary<Json>).map(String),
    })),
  );
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

/** The public API's own broken headers: the Idempotency-Key, a token that is no JWT of ours. */
const HEADER_BREAKS: Array<HeaderBreak<FuzzCase>> = [
  { name: 'no idempotency-key', apply: (c) => withHeaders(c, { 'idempotency-key': undefined }) },
  { name: 'empty idempotency-key', apply: (c) => withHeaders(c, { 'idempotency-key': '' }) },
  { name: 'idempotency-key with a space', apply: (c) => withHeaders(c, { 'idempotency-key': 'a b' }) },
  { name: 'idempotency-key of 256 characters', apply: (c) => withHeaders(c, { 'idempotency-key': 'k'.repeat(256) }) },
  { name: 'idempotency-key in latin-1', apply: (c) => withHeaders(c, { 'idempotency-key': 'chav\u00e9' }) },
  authorizationBreak('authorization random', 'Bearer abc.def.ghi'),
  authorizationBreak('authorization huge', `Bearer ${'a'.repeat(6000)}`),
  authorizationBreak(
    'authorization alg none',
    `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","tenant_id":"x"}').toString('base64url')}.`,
  ),
];

function operationArbitrary(operation: ApiOperation, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const schema = operation.requestBody && asNode(operation.requestBody.schema);
  return operationVariants({
    valid: validParts(operation, world),
    operation,
    auth: operation.security === 'none' ? 'none' : 'tenant',
    validWeight: validWeight(operation),
    headerBreaks: HEADER_BREAKS,
    bodySchema: schema && { schema, weight: 8 },
    bodyBreaks: schema && BODY_BREAKS,
    pathNames: (operation.pathParameters ?? []).map((p) => p.name),
    badPath: BAD_PATH,
    queryNames: (operation.queryParameters ?? []).map((p) => p.name),
    badQuery: BAD_QUERY,
  });
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

/** The first item of a batch (the body itself when it is no array). */
const itemOf = (body: Json): Json => (Array.isArray(body) ? (body[0] ?? {}) : body);

/** The public API's own whole-body breaks: too many items, too large, a key twice. */
const BODY_BREAKS: BodyBreak[] = [
  ['1,001 items', (body) => serialize(Array.from({ length: 1001 }, () => itemOf(body) ?? {}))],
  ['over 1 MiB', (body) => serialize([{ ...(itemOf(body) as object), name: 'x'.repeat(1024 * 1024) }])],
  ['duplicate keys', (body) => serialize(body).replace(/^\[\{/, '[{"name":1,')],
];

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
