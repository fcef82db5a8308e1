// Turns the standard's document (openapi/openapi.yaml) into JSON Schemas ajv compiles: each of its
// components.schemas, and the schemas of its request bodies that are written inline (the webhook notice's
// `{ pix: [...] }`, for one), under their own names. References between them become `#/$defs/<name>`;
// prose (description, example, title) and OpenAPI-only keywords are dropped, as validation needs none.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';

export const ROOT = join(__dirname, '..');
export const DOCUMENT_FILE = join(ROOT, 'openapi', 'openapi.yaml');
export const GENERATED_FILE = join(ROOT, 'src', 'generated', 'standard-schemas.ts');

// Keywords of OpenAPI or of prose that JSON Schema validation does not use. Never applied to the names
// under `properties`, where a field may well be called `title` or `type` (Problema has both).
const DROPPED = new Set(['description', 'example', 'examples', 'title', 'readOnly', 'writeOnly', 'default', 'xml']);
const SCHEMA_REF = '#/components/schemas/';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Document {
  components: {
    schemas: Record<string, Json>;
    requestBodies: Record<string, { content?: Record<string, { schema?: Json }> }>;
  };
}

/** The definitions, by name, of the standard's schemas in `documentText`. */
export function definitionsOf(documentText: string): Record<string, Json> {
  const document = parse(documentText) as Document;
  const definitions: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(document.components.schemas)) definitions[name] = convert(schema);
  for (const [name, body] of Object.entries(document.components.requestBodies)) {
    const schema = body.content?.['application/json']?.schema;
    // A body that only names a schema adds nothing; one written inline becomes a definition of its own.
    if (!schema || isRefOnly(schema)) continue;
    if (name in definitions) throw new Error(`request body ${name} has the name of a schema`);
    definitions[name] = convert(schema);
  }
  return definitions;
}

export async function readDocument(): Promise<string> {
  return readFile(DOCUMENT_FILE, 'utf8');
}

function convert(node: Json): Json {
  if (Array.isArray(node)) return node.map(convert);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key) || key.startsWith('x-')) continue;
    if (key === '$ref') out.$ref = refOf(value);
    else if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, convert(schema)]));
    } else out[key] = convert(value);
  }
  return out;
}

function refOf(value: Json): string {
  if (typeof value !== 'string' || !value.startsWith(SCHEMA_REF)) {
    throw new Error(`a schema refers to ${JSON.stringify(value)}, not to one of components.schemas`);
  }
  return `#/$defs/${value.slice(SCHEMA_REF.length)}`;
}

function isRefOnly(schema: Json): boolean {
  return (
    schema !== null &&
    typeof schema === 'object' &&
    !Array.isArray(schema) &&
    Object.keys(schema).length === 1 &&
    '$ref' in schema
  );
}
