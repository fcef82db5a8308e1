import type { TSchema } from '@sinclair/typebox';
import type { JsonObject, JsonValue, SchemaObject } from './types';

export const COMPONENT_SCHEMA_PREFIX = '#/components/schemas/';

const isObject = (value: JsonValue): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Turns TypeBox schemas into the document's JSON Schemas and collects the reusable ones under
 * components/schemas. A TypeBox schema is JSON Schema already; what must change for OpenAPI:
 * - TypeBox's symbol keys (Kind, Optional) are not JSON: a JSON round trip drops them.
 * - `$id` goes: in JSON Schema 2020-12 a nested `$id` starts a new base URI, which would make every
 *   `$ref` below it resolve against "ClientData" instead of the document. A schema with an `$id`
 *   becomes the component of that name, referenced by `$ref` wherever it is used.
 * - Schemas without an `$id` that are worth a name (e.g. PaymentData) are named by the caller and
 *   recognised by their content, because TypeBox copies a schema when it wraps it (Type.Optional).
 */
export class SchemaRegistry {
  private readonly components = new Map<string, SchemaObject>();
  private readonly namedByContent = new Map<string, string>();

  constructor(named: Record<string, TSchema> = {}) {
    for (const [name, schema] of Object.entries(named)) this.namedByContent.set(fingerprint(plain(schema)), name);
  }

  /** The schema for use in an operation: a `$ref` when it is (or is named as) a component, else inline. */
  use(schema: TSchema): SchemaObject {
    const converted = this.convert(plain(schema));
    if (!isObject(converted)) throw new Error('a schema must be a JSON object');
    return converted;
  }

  /** Registers a schema under a name of the caller's choosing and answers its `$ref`. */
  define(name: string, schema: TSchema): SchemaObject {
    this.register(name, plain(schema));
    return { $ref: COMPONENT_SCHEMA_PREFIX + name };
  }

  /** Every component, sorted by name (a stable document diffs well). */
  schemas(): Record<string, SchemaObject> {
    return Object.fromEntries([...this.components.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  private convert(node: JsonValue): JsonValue {
    if (Array.isArray(node)) return node.map((item) => this.convert(item));
    if (!isObject(node)) return node;
    const name = typeof node.$id === 'string' ? node.$id : this.namedByContent.get(fingerprint(node));
    if (name !== undefined) {
      this.register(name, node);
      return { $ref: COMPONENT_SCHEMA_PREFIX + name };
    }
    return this.convertMembers(node);
  }

  private convertMembers(node: JsonObject): JsonObject {
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$id') continue;
      // Data, not schemas: a `const`, `default` or `enum` value is copied as it is.
      out[key] = key === 'const' || key === 'default' || key === 'enum' ? value : this.convert(value);
    }
    return simplifyLiteralUnion(out);
  }

  private register(name: string, node: JsonObject): void {
    const existing = this.components.get(name);
    if (existing === PENDING) return; // a schema that contains itself: its $ref is enough
    this.components.set(name, PENDING);
    const converted = this.convertMembers(node);
    if (existing !== undefined && fingerprint(existing) !== fingerprint(converted)) {
      throw new Error(`two different schemas are both named ${name}`);
    }
    this.components.set(name, converted);
  }
}

/** Marks a component being converted, so that a recursive schema does not loop. */
const PENDING: SchemaObject = Object.freeze({});

/** The JSON content of a TypeBox schema (symbol keys and undefined options dropped). */
function plain(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

/** Content identity, key order not counting. */
function fingerprint(node: JsonValue): string {
  if (Array.isArray(node)) return `[${node.map(fingerprint).join(',')}]`;
  if (!isObject(node)) return JSON.stringify(node);
  const keys = Object.keys(node)
    .filter((k) => k !== '$id')
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${fingerprint(node[k])}`).join(',')}}`;
}

/**
 * TypeBox writes a union of literals as anyOf [{const, type}, ...]; the equivalent `enum` reads far
 * better in documentation tools (a drop-down instead of N alternatives).
 */
function simplifyLiteralUnion(node: JsonObject): JsonObject {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return node;
  const literals = branches
    .filter(isObject)
    .filter((b) => 'const' in b && Object.keys(b).every((k) => k === 'const' || k === 'type'));
  if (literals.length !== branches.length) return node;
  const types = new Set(literals.map((b) => b.type));
  const [type] = types;
  if (types.size !== 1 || typeof type !== 'string') return node;
  const { anyOf: _replaced, ...rest } = node;
  return { type, enum: literals.map((b) => b.const), ...rest };
}
