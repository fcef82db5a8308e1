// The standard's document as the tests read it: parsed, with its examples resolved.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const DOCUMENT_TEXT = readFileSync(join(__dirname, '..', 'openapi', 'openapi.yaml'), 'utf8');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Document {
  components: {
    schemas: Record<string, { [key: string]: Json }>;
    examples: Record<string, { value: Json }>;
  };
}

export const DOCUMENT = parse(DOCUMENT_TEXT) as Document;

const EXAMPLE_REF = /^#\/components\/examples\/([^/]+)\/value$/;

/**
 * The value of one of the document's examples. The document composes list examples from others as
 * `{ "allOf": [ { "$ref": "#/components/examples/<name>/value" } ] }` (a convention of its renderer);
 * those are replaced by the example they name.
 */
export function example(name: string): Json {
  const found = DOCUMENT.components.examples[name];
  if (!found) throw new Error(`the document has no example ${name}`);
  return resolve(found.value);
}

function resolve(node: Json): Json {
  if (Array.isArray(node)) return node.map(resolve);
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string') return example(EXAMPLE_REF.exec(ref)?.[1] ?? ref);
  const parts = node.allOf;
  if (Array.isArray(parts) && Object.keys(node).length === 1) {
    return Object.assign({}, ...parts.map(resolve).filter((part) => typeof part === 'object'));
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value)]));
}

/** The rows of a domain table in a schema's description: `<tr><td>name</td><td>code</td></tr>`. */
export function domainTable(description: string): Map<string, number> {
  const rows = [...description.matchAll(/<tr><td>([^<]+)<\/td><td>(\d+)<\/td><\/tr>/g)];
  return new Map(rows.map((row) => [(row[1] ?? '').replace(/\s+/g, ' ').trim(), Number(row[2])]));
}
