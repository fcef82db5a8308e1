import fc from 'fast-check';
import { ADMIN_OPERATIONS, type AdminOperation, type ParameterObject } from '@payments/contracts';
import type { FuzzCase } from './cases';
import { serialize } from './mutations';
import { asNode, validArbitrary, type Hints, type Json, type SchemaNode } from './schema-arbitrary';
import { authorizationBreak, knownOrRandom, operationVariants, optionalEntries, withHeaders } from './variants';
import type { BodyBreak, ExtraBadValues, GeneratedCase, HeaderBreak, Parts } from './variants';

/**
 * One generated request against one operation of the admin API (libs/contracts ADMIN_OPERATIONS: the
 * list its OpenAPI document is built from, so a new admin route is fuzzed once it is documented).
 * `auth` operator: the run's operator credential.
 */
export type AdminCase = GeneratedCase<'operator'>;

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
  switch (name) {
    case 'tenant_id':
      return knownOrRandom(world.tenantIds);
    case 'token_id':
      return knownOrRandom(world.tokenIds);
    default:
      // dead_letter_id: none exists in a fresh world, so every redrive is a 404 (or a refusal).
      return fc.integer({ min: 1, max: 1_000_000 }).map(String);
  }
}

/** Numbers a dead letter's id must not take (fractions, hex, past 2^53), and a UUID one digit short. */
const BAD_PATH: ExtraBadValues = {
  values: ['1.5', '0x10', '99999999999999999999', '9007199254740993'],
  arbitraries: [fc.uuid().map((u) => u.slice(0, -1))],
};

/* Query parameters --------------------------------------------------------------------------------- */

/** Limits and cursors just past their range, windows almost right, a NUL, a near-UUID tenant. */
const BAD_QUERY: ExtraBadValues = {
  values: [
    '1001',
    '9999999999999999999',
    '999999999999999999',
    'HOUR',
    'week',
    'hour ',
    '\u0000',
    '00000000-0000-0000-0000-00000000000g',
  ],
};

function validQueryValue(parameter: ParameterObject, world: AdminWorld): fc.Arbitrary<string> {
  const schema = parameter.schema as SchemaNode & { enum?: string[] };
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (parameter.name === 'tenant_id') return validPathValue('tenant_id', world);
  return (validArbitrary(schema) as fc.Arbitrary<Json>).map(String);
}

function validQuery(operation: AdminOperation, world: AdminWorld): fc.Arbitrary<Array<[string, string]>> {
  return optionalEntries(
    (operation.queryParameters ?? []).map((p) => ({ name: p.name, value: validQueryValue(p, world) })),
  );
}

/* Requests ----------------------------------------------------------------------------------------- */

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
      headers: {},
    }));
}

/** The admin API's own broken headers: no content type, credentials that are no active operator's. */
function headerBreaks(world: AdminWorld): Array<HeaderBreak<AdminCase>> {
  const bearer = (name: string, token: string) => authorizationBreak<AdminCase>(name, `Bearer ${token}`);
  const { tenantToken, tenantJwt, revokedOperator } = world.foreignCredentials;
  return [
    { name: 'no content-type', apply: (c) => withHeaders(c, { 'content-type': undefined }) },
    bearer('authorization opk_ alone', 'opk_'),
    bearer('authorization unknown opk_', `opk_${'A'.repeat(43)}`),
    bearer('authorization huge opk_', `opk_${'a'.repeat(6000)}`),
    bearer("a tenant's integration token", tenantToken),
    bearer("a tenant's JWT", tenantJwt),
    bearer('a revoked operator credential', revokedOperator),
  ];
}

/** The admin API's own whole-body breaks: too large, nested just deep enough or too deep, NULs. */
const BODY_BREAKS: BodyBreak[] = [
  ['over 1 MiB', (body) => serialize({ ...(body as object), name: 'x'.repeat(1024 * 1024) })],
  ['32 levels of {', () => `${'{"a":'.repeat(32)}1${'}'.repeat(32)}`],
  ['33 levels of [', () => `${'['.repeat(33)}1${']'.repeat(33)}`],
  ['NUL in every string', (body) => serialize(body).replace(/"([^"\\]+)"(?!:)/g, '"$1\\u0000"')],
];

function operationArbitrary(operation: AdminOperation, world: AdminWorld): fc.Arbitrary<AdminCase> {
  const schema = operation.requestBody && asNode(operation.requestBody);
  return operationVariants({
    valid: validParts(operation, world),
    operation,
    auth: 'operator',
    validWeight: 4,
    headerBreaks: headerBreaks(world),
    bodySchema: schema && { schema, weight: 6 },
    // Every admin route reads a body, whether its operation takes one or not.
    bodyBreaks: BODY_BREAKS,
    pathNames: operation.pathParameters ?? [],
    badPath: BAD_PATH,
    queryNames: (operation.queryParameters ?? []).map((q) => q.name),
    badQuery: BAD_QUERY,
  });
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
