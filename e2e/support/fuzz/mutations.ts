import fc from 'fast-check';
import { pointer, valueNodes, type Json, type SchemaNode, type ValueNode } from './schema-arbitrary';

/**
 * Breaking exactly one field of a valid request: the kinds of damage an ERP (or an attacker) sends.
 * A mutation picks its place among the nodes it applies to (a date for an out-of-range date, a
 * required property for a missing one), so every field of every schema gets its turn.
 */
export const MUTATION_KINDS = [
  'wrong_type',
  'nul',
  'too_long',
  'date_out_of_range',
  'missing',
  'huge_number',
  'negative',
  'deep_nesting',
  'unicode',
  'uuid_case',
  'extra_field',
  'null',
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

export interface MutationChoice {
  kind: MutationKind;
  /** Which applicable node (modulo their number). */
  at: number;
  /** Which replacement of the kind (modulo their number). */
  variant: number;
  /** A random JSON value, for extra fields. */
  extra: Json;
}

export const mutationChoice: fc.Arbitrary<MutationChoice> = fc.record({
  kind: fc.constantFrom(...MUTATION_KINDS),
  at: fc.nat(),
  variant: fc.nat(),
  extra: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
});

/**
 * Number literals JSON.stringify cannot write (1e999 parses to Infinity, -0): a string marker that
 * `serialize` swaps for the raw literal.
 */
const raw = (literal: string): Json => `\u0001raw:${Buffer.from(literal).toString('base64')}\u0001`;

/** JSON text of a (mutated) value, raw literals put back. */
export function serialize(value: Json): string {
  return JSON.stringify(value).replace(/"\\u0001raw:([A-Za-z0-9+/=]*)\\u0001"/g, (_m, b64: string) =>
    Buffer.from(b64, 'base64').toString(),
  );
}

const WRONG_TYPES: Json[] = [0, 1.5, -1, true, false, '', 'x', [], {}, ['a'], { a: 1 }, '150.75', '1', 'null', null];
const OUT_OF_RANGE_DATES = [
  '0000-01-01',
  '0001-01-01',
  '1999-12-31',
  '2100-01-01',
  '9999-12-31',
  '-0001-01-01',
  '+002026-01-01',
  '2026-02-30',
  '2026-13-01',
  '20260101',
  '2026-1-1',
  '1970-01-01',
  '2026-01-01T00:00:00Z',
  '0000-00-00',
  '2026-01-01\u0000',
];
const HUGE_NUMBERS: Json[] = [
  1e308,
  -1e308,
  9_999_999_999.995,
  10_000_000_000,
  2 ** 53 + 1,
  1e21,
  5e-324,
  1.0000000000000002,
  raw('123456789012345678901234567890'),
  raw('1e999'),
  raw('-1e999'),
  raw(`1${'0'.repeat(400)}`),
  raw('0.1e-400'),
];
const ODDITIES = [
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\u202e',
  '\u200b',
  '\ufeff',
  '\uffff',
  '\u{10ffff}',
  'e\u0301',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '١٢٣',
  '０１２',
  '\u2028\u2029',
  '\t\n\r',
  '\u00a0',
  '\u0085',
  'İß',
  '%00',
  '\\u0000',
  "'; drop table clients; --",
  '<script>alert(1)</script>',
  '\u001b[31m',
  '😀'.repeat(100),
];
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', '', 'x'.repeat(1000), '\u0000', 'tenant_id', 'id'];

const isString = (v: Json): v is string => typeof v === 'string';
const isNumber = (v: Json): v is number => typeof v === 'number';
const isObject = (v: Json): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);
const pick = <T>(list: readonly T[], n: number): T => list[n % list.length];

/** Where each kind applies: a mutation with no such place falls back to the wrong type of some field. */
const APPLIES: Record<MutationKind, (node: ValueNode) => boolean> = {
  wrong_type: () => true,
  nul: (n) => n.path.length > 0,
  too_long: (n) => isString(n.value) || n.schema?.maxLength !== undefined,
  date_out_of_range: (n) => n.schema?.format === 'date',
  missing: (n) => n.required,
  huge_number: (n) => isNumber(n.value),
  negative: (n) => isNumber(n.value),
  deep_nesting: () => true,
  unicode: (n) => isString(n.value),
  uuid_case: (n) => n.schema?.format === 'uuid',
  extra_field: (n) => isObject(n.value),
  null: (n) => n.path.length > 0 && n.value !== null,
};

export interface Mutated {
  value: Json;
  /** Removed instead of replaced. */
  description: string;
}

/** `value` with one place broken as `choice` says, and what was done (kind and JSON pointer). */
export function mutate(value: Json, schema: SchemaNode | undefined, choice: MutationChoice): Mutated {
  const nodes = valueNodes(value, schema);
  let kind = choice.kind;
  let candidates = nodes.filter(APPLIES[kind]);
  if (candidates.length === 0) {
    kind = 'wrong_type';
    candidates = nodes;
  }
  const node = pick(candidates, choice.at);
  const copy = structuredClone(value);
  const where = pointer(node.path) || '(root)';
  if (kind === 'missing') {
    remove(copy, node.path);
    return { value: copy, description: `missing ${where}` };
  }
  const replacement = replace(kind, node, choice);
  return { value: setAt(copy, node.path, replacement), description: `${kind} at ${where}` };
}

function replace(kind: MutationKind, node: ValueNode, { variant, extra }: MutationChoice): Json {
  const v = node.value;
  switch (kind) {
    case 'wrong_type': {
      const type = (x: Json) => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
      const others = WRONG_TYPES.filter((w) => type(w) !== type(v));
      return structuredClone(pick(others, variant));
    }
    case 'nul': {
      if (!isString(v)) return '\u0000';
      const at = variant % (v.length + 1);
      return `${v.slice(0, at)}\u0000${v.slice(at)}`;
    }
    case 'too_long': {
      const max = node.schema?.maxLength ?? 255;
      const sizes = [max + 1, max * 10, 100_000];
      const unit = pick(['x', 'é', '😀'], variant >> 2);
      return unit.repeat(pick(sizes, variant));
    }
    case 'date_out_of_range':
      return pick(OUT_OF_RANGE_DATES, variant);
    case 'huge_number':
      return pick(HUGE_NUMBERS, variant);
    case 'negative':
      return pick([-Math.abs(v as number) - 0.01, -1, raw('-0'), -1e-9, -9_999_999_999.99], variant);
    case 'deep_nesting': {
      // Containers above this place: the total depth lands on 32 (allowed), 33 (refused) or far beyond.
      const above = node.path.length;
      const levels = Math.max(pick([32 - above, 33 - above, 200, 20_000], variant), 1);
      const [open, close] = variant % 2 === 1 ? ['{"a":', '}'] : ['[', ']'];
      // Written as text: this process's own JSON.stringify need not survive 20,000 levels.
      return raw(`${open.repeat(levels)}1${close.repeat(levels)}`);
    }
    case 'unicode': {
      const odd = pick(ODDITIES, variant);
      return pick([`${v as string}${odd}`, odd, `${odd}${v as string}`], variant >> 5);
    }
    case 'uuid_case': {
      const s = v as string;
      return variant % 2 === 0
        ? s.toUpperCase()
        : [...s].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');
    }
    case 'extra_field': {
      const key = pick(EXTRA_KEYS, variant);
      const obj = structuredClone(v) as { [key: string]: Json };
      Object.defineProperty(obj, key, { value: extra, enumerable: true, configurable: true, writable: true });
      return obj;
    }
    case 'null':
      return null;
    case 'missing':
      return v;
  }
}

function setAt(root: Json, path: Array<string | number>, replacement: Json): Json {
  if (path.length === 0) return replacement;
  const parent = navigate(root, path.slice(0, -1)) as { [key: string]: Json } | Json[];
  const last = path[path.length - 1];
  Object.defineProperty(parent, last, { value: replacement, enumerable: true, configurable: true, writable: true });
  return root;
}

function remove(root: Json, path: Array<string | number>): void {
  const parent = navigate(root, path.slice(0, -1));
  const last = path[path.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isObject(parent)) delete parent[last as string];
}

function navigate(root: Json, path: Array<string | number>): Json {
  let at = root;
  for (const step of path) at = (at as Record<string | number, Json>)[step];
  return at;
}
