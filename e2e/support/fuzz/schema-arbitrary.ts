import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { TEXT_PATTERN, NOT_BLANK_TEXT_PATTERN, DATE_RANGE_PATTERN } from '@payments/contracts';

/**
 * fast-check arbitraries read off the contracts' TypeBox schemas (plain JSON Schema underneath), walked
 * generically: type, properties/required, items/minItems/maxItems, anyOf, const, format, pattern,
 * min/maxLength, minimum/maximum/exclusiveMinimum. Fields whose rules a schema cannot say (a client
 * that must exist, a CPF's check digits, money with 2 decimals) take an arbitrary from `hints`, by
 * property name. What comes out is meant to be valid; the fuzz test still classifies every request
 * with the contracts' validators, so an invalid one only lands in the other corpus.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Hints = Record<string, fc.Arbitrary<Json>>;

/** Schema keywords the walker reads (TypeBox adds only symbols beyond them). */
export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  minItems?: number;
  maxItems?: number;
  anyOf?: SchemaNode[];
  const?: Json;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

export const asNode = (schema: TSchema): SchemaNode => schema as unknown as SchemaNode;

/** Arrays stay small: a batch of 1,000 is its own mutation (413), not the common case. */
const MAX_GENERATED_ITEMS = 3;

export function validArbitrary(schema: SchemaNode, hints: Hints = {}, name?: string): fc.Arbitrary<Json> {
  if (name !== undefined && hints[name]) return hints[name];
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => validArbitrary(branch, hints)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'object':
      return objectArbitrary(schema, hints);
    case 'array':
      return fc.array(validArbitrary(schema.items ?? {}, hints), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(
          schema.minItems ?? 0,
          Math.min(schema.maxItems ?? MAX_GENERATED_ITEMS, MAX_GENERATED_ITEMS),
        ),
      });
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return numberArbitrary(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }
}

function objectArbitrary(schema: SchemaNode, hints: Hints): fc.Arbitrary<Json> {
  const properties = schema.properties ?? {};
  const model: Record<string, fc.Arbitrary<Json>> = {};
  for (const [key, sub] of Object.entries(properties)) model[key] = validArbitrary(sub, hints, key);
  return fc.record(model, { requiredKeys: schema.required ?? [] }) as fc.Arbitrary<Json>;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);
/** Dates an ERP would send: within the accepted range, mostly near today. */
export const dateArbitrary = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map(isoDay);

/** Readable text with the odd accent and symbol; never blank. */
const textArbitrary = (maxLength: number) =>
  fc
    .string({ unit: fc.constantFrom(...'abcdefghij ABC áéíõç-./,ºª0123456789&'.split('')), minLength: 1, maxLength })
    .filter((s) => s.trim() !== '');

function stringArbitrary(schema: SchemaNode): fc.Arbitrary<Json> {
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date':
      return dateArbitrary;
    case 'email':
    case 'email-or-empty':
      return fc.oneof(
        fc.constant(''),
        fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 255)),
      );
    case 'uri':
      return fc.webUrl({ validSchemes: ['https', 'http'] });
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    default:
      break;
  }
  switch (schema.pattern) {
    case undefined:
    case TEXT_PATTERN:
      return fc.oneof(fc.constant(''), textArbitrary(maxLength));
    case NOT_BLANK_TEXT_PATTERN:
      return textArbitrary(maxLength);
    case DATE_RANGE_PATTERN:
      return dateArbitrary;
    default:
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? Infinity));
  }
}

function numberArbitrary(schema: SchemaNode): fc.Arbitrary<Json> {
  const min = schema.exclusiveMinimum ?? schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true })
    .filter((n) => (schema.exclusiveMinimum === undefined ? true : n > schema.exclusiveMinimum));
}

/** One place in a value: its JSON pointer, the value there, and the schema that describes it. */
export interface ValueNode {
  path: Array<string | number>;
  value: Json;
  schema: SchemaNode | undefined;
  /** The property is required by its object's schema (so removing it is a mutation). */
  required: boolean;
}

/** Every place in `value` (root included), each with the subschema that describes it, where one does. */
export function valueNodes(value: Json, schema: SchemaNode | undefined): ValueNode[] {
  const nodes: ValueNode[] = [];
  const visit = (v: Json, s: SchemaNode | undefined, path: Array<string | number>, required: boolean) => {
    const resolved = resolveBranch(v, s);
    nodes.push({ path, value: v, schema: resolved, required });
    if (Array.isArray(v)) v.forEach((item, i) => visit(item, resolved?.items, [...path, i], false));
    else if (v !== null && typeof v === 'object')
      for (const [key, item] of Object.entries(v))
        visit(item, resolved?.properties?.[key], [...path, key], resolved?.required?.includes(key) ?? false);
  };
  visit(value, schema, [], false);
  return nodes;
}

/** The branch of an anyOf the value takes (by JSON type), so a nested field finds its own schema. */
function resolveBranch(value: Json, schema: SchemaNode | undefined): SchemaNode | undefined {
  if (!schema?.anyOf) return schema;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const fits = schema.anyOf.find(
    (b) => b.type === type || (b.type === 'integer' && type === 'number') || (b.anyOf && resolveBranch(value, b)),
  );
  return fits ? resolveBranch(value, fits) : schema.anyOf[0];
}

export function pointer(path: Array<string | number>): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
